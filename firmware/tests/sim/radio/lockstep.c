#define _DEFAULT_SOURCE
#include "lockstep.h"

#include "simavr_timers.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include <simavr/sim_avr.h>

double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void lockstep_init(lockstep_t* s, const faults_t* faults, FILE* trace) {
  memset(s, 0, sizeof *s);
  air_init(&s->air, faults, trace);
  s->crashed_board = -1;
  s->wall_start_ms = wall_ms();
}

board_t* lockstep_add(lockstep_t* s, const char* elf, ticks_t offset, int with_radio, uint32_t vcc_mv,
                      const uint32_t adc_mv[8]) {
  if (s->count == MAX_BOARDS) return NULL;
  board_t* b = &s->boards[s->count];
  if (board_init(b, s->count, elf, offset, &s->air, with_radio, vcc_mv, adc_mv)) return NULL;
  ++s->count;
  return b;
}

ticks_t lockstep_now(const lockstep_t* s) {
  ticks_t min = board_now(&s->boards[0]);
  for (int i = 1; i < s->count; ++i) {
    ticks_t t = board_now(&s->boards[i]);
    if (t < min) min = t;
  }
  return min;
}

// Once per simulated ms of the slowest board: forget old packets, pace, watch the wall clock.
static int housekeeping(lockstep_t* s, ticks_t now) {
  air_prune(&s->air, now);
  for (int i = 0; i < s->count; ++i) fix_phase_correct_timers(s->boards[i].avr);
  if (s->every_ms) s->every_ms(s->every_ms_ctx);
  if (s->stop && *s->stop) return RUN_SIGNAL;
  double wall = wall_ms() - s->wall_start_ms;
  if (s->wall_limit_s > 0 && wall > s->wall_limit_s * 1000) return RUN_WATCHDOG;
  if (s->realtime) {
    double ahead_ms = (double)now / TICKS_PER_MS - wall;
    if (ahead_ms > 1) usleep((useconds_t)(ahead_ms * 1000));
  }
  return RUN_TIME;
}

int lockstep_run_until(lockstep_t* s, ticks_t until) {
  ticks_t now[MAX_BOARDS];  // each board's time, updated as it steps (computing it costs a division)
  for (int i = 0; i < s->count; ++i) now[i] = board_now(&s->boards[i]);
  ticks_t next_ms = lockstep_now(s) / TICKS_PER_MS * TICKS_PER_MS + TICKS_PER_MS;
  for (;;) {
    // The board furthest behind runs until it passes the next one (or the end); then choose again.
    int behind = 0;
    ticks_t first = now[0], second = (ticks_t)-1;
    for (int i = 1; i < s->count; ++i) {
      if (now[i] < first) {
        second = first;
        first = now[i];
        behind = i;
      } else if (now[i] < second) {
        second = now[i];
      }
    }
    if (first >= until) return RUN_TIME;
    if (first >= next_ms) {
      int outcome = housekeeping(s, first);
      if (outcome != RUN_TIME) return outcome;
      next_ms = first / TICKS_PER_MS * TICKS_PER_MS + TICKS_PER_MS;
    }
    ticks_t limit = second < next_ms ? second : next_ms;
    if (limit > until) limit = until;
    board_t* b = &s->boards[behind];
    uint64_t last_cycle = board_cycle_at(b, limit + 1) - 1;  // the last cycle at or before `limit`
    do {
      int state = board_step(b);
      if (state == cpu_Crashed || state == cpu_Done) {
        s->crashed_board = behind;
        return RUN_CRASHED;
      }
    } while (b->avr->cycle <= last_cycle);
    now[behind] = board_now(b);
  }
}

void lockstep_finish(lockstep_t* s) { air_prune(&s->air, (ticks_t)-1 - US(1000)); }

void lockstep_free(lockstep_t* s) {
  for (int i = 0; i < s->count; ++i) board_free(&s->boards[i]);
  air_free(&s->air);
}
