// Sending requests: asynchronously, at most maxInFlight at a time (gateway/contract/cassandra-writes.md); answers
// are collected for the sender's next step, so all bookkeeping happens in one place.
//
// A statement is {queries: [{query, params}, ...]} (an UNLOGGED batch of one partition) or {query, params}. Every
// write is idempotent (same reading, same key), so the driver may retry it and so may the RetrySchedule.

const BATCH_OPTIONS = Object.freeze({ prepare: true, logged: false, isIdempotent: true });
const SINGLE_OPTIONS = Object.freeze({ prepare: true, isIdempotent: true });

export class Request {
  constructor(due, statement, owner, attempts = 0, day = null) {
    this.due = due; // when a failed request may be sent again (RetrySchedule), performance.now() ms
    this.statement = statement;
    this.owner = owner; // what its success counts towards (WriteLedger); null for nobody
    this.attempts = attempts;
    this.sentAt = 0;
    this.day = day; // [source, day] of a readings write: it needs its day's mark (day-marks.js); else null
  }
}

/** Sends a statement through a cassandra-driver Client; resolves on success. */
function sendStatement(client, statement) {
  return statement.queries ? client.batch(statement.queries, BATCH_OPTIONS)
    : client.execute(statement.query, statement.params, SINGLE_OPTIONS);
}

export class RequestPump {
  /**
   * @param {number} maxInFlight
   * @param {() => void} onAnswer called when an answer arrives
   * @param {((request: Request) => boolean) | null} beforeSend called with each request right before it is sent
   *   (each attempt): false keeps it back (the caller has taken it over, e.g. until the mark of its day is
   *   written); it may also set the request's statement
   */
  constructor(maxInFlight, onAnswer, beforeSend = null) {
    this.maxInFlight = maxInFlight;
    this.inFlight = 0; // sent, not yet answered
    this.ready = [];
    this.answered = [];
    this.onAnswer = onAnswer;
    this.beforeSend = beforeSend;
  }

  /** Requests ready but not yet sent. */
  get waiting() {
    return this.ready.length;
  }

  /** Queues requests; first puts them ahead of those already waiting (retries, acknowledgements). */
  add(requests, first = false) {
    if (requests.length === 0) return;
    if (first) this.ready.unshift(...requests);
    else for (const request of requests) this.ready.push(request);
  }

  send(client) {
    const { beforeSend } = this;
    while (this.ready.length && this.inFlight < this.maxInFlight) {
      const request = this.ready.shift();
      if (beforeSend !== null && !beforeSend(request)) continue;
      this.inFlight += 1;
      request.sentAt = performance.now();
      let sent;
      try {
        sent = sendStatement(client, request.statement);
      } catch (error) { // e.g. the client is shutting down: same path as a failed request
        this.answer(request, error);
        continue;
      }
      sent.then(() => this.answer(request, null), (error) => this.answer(request, error ?? new Error('failed')));
    }
  }

  answer(request, error) {
    this.answered.push([request, error]);
    this.onAnswer();
  }

  /** The answers received since the last call: [request, null] for a success, [request, error] otherwise. */
  answers() {
    const answers = this.answered;
    this.answered = [];
    this.inFlight -= answers.length;
    return answers;
  }
}
