// Several boards in one process, stepped in lockstep: always the board furthest behind in simulated time, so a
// radio event from one board never lands in another's past (board.c's heartbeat bounds how far a sleeping core
// jumps; air.c and nrf24_schedule check it).
#pragma once

#include "air.h"
#include "board.h"

#define MAX_BOARDS 8

enum run_outcome { RUN_TIME, RUN_CRASHED, RUN_WATCHDOG, RUN_SIGNAL };

typedef struct {
  board_t boards[MAX_BOARDS];
  int count;
  air_t air;
  int realtime;            // pace simulated time to the wall clock
  double wall_limit_s;     // give up after this much wall time (0: no limit)
  volatile int* stop;      // set by a signal handler: stop at the next simulated ms
  int crashed_board;
  double wall_start_ms;
  void (*every_ms)(void* ctx);  // once per simulated ms (pty input, test probes)
  void* every_ms_ctx;
} lockstep_t;

void lockstep_init(lockstep_t* s, const faults_t* faults, FILE* trace);
board_t* lockstep_add(lockstep_t* s, const char* elf, ticks_t offset, int with_radio, uint32_t vcc_mv,
                      const uint32_t adc_mv[8]);
ticks_t lockstep_now(const lockstep_t* s);  // the time every board has reached
int lockstep_run_until(lockstep_t* s, ticks_t t);
void lockstep_finish(lockstep_t* s);        // writes the trace lines of the packets still on the air
void lockstep_free(lockstep_t* s);
double wall_ms(void);
