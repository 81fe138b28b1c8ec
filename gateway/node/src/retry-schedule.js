// Failed requests wait for their next attempt on the one backoff schedule (backoff.js).

import { backoffS } from './backoff.js';

/**
 * A request is retried until it succeeds: nothing is dropped, and every write is idempotent. Times are
 * milliseconds on one monotonic clock (performance.now()); a request is any object with `attempts` and `due`
 * (request-pump.js Request).
 */
export class RetrySchedule {
  constructor(maxS) {
    this.maxS = maxS;
    this.waiting = []; // a binary heap of {request, due, order}: by due time, then by when it came
    this.added = 0;
  }

  /** Requests waiting. */
  get size() {
    return this.waiting.length;
  }

  /** The request failed again at nowMs: it waits backoffS(attempts) before it is due. */
  retryLater(request, nowMs) {
    request.attempts += 1;
    request.due = nowMs + backoffS(request.attempts, this.maxS) * 1000;
    this.push({ request, due: request.due, order: this.added++ });
  }

  /** Milliseconds from nowMs until the earliest retry is due; Infinity when none waits. */
  nextDueMs(nowMs) {
    return this.waiting.length ? this.waiting[0].due - nowMs : Infinity;
  }

  /** The requests whose wait is over at nowMs, earliest first. */
  due(nowMs) {
    const due = [];
    while (this.waiting.length && this.waiting[0].due <= nowMs) due.push(this.pop().request);
    return due;
  }

  push(entry) {
    const heap = this.waiting;
    let i = heap.push(entry) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(entry, heap[parent])) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = entry;
  }

  pop() {
    const heap = this.waiting;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && before(heap[right], heap[left]) ? right : left;
        if (!before(heap[child], last)) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}

function before(a, b) {
  return a.due < b.due || (a.due === b.due && a.order < b.order);
}
