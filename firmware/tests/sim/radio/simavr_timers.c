#include "simavr_timers.h"

#include <string.h>

#include <simavr/avr_timer.h>
#include <simavr/sim_avr.h>

void fix_phase_correct_timers(struct avr_t* avr) {
  for (avr_io_t* io = avr->io_port; io; io = io->next) {
    if (strcmp(io->kind, "timer")) continue;
    avr_timer_t* t = (avr_timer_t*)io;  // avr_io_t is its first member
    // Only a running timer in simavr's invalid mode, whose period is a single tick (top 0).
    if (t->mode.kind != avr_timer_wgm_none || t->tov_top != 0 || t->tov_cycles == 0) continue;
    uint64_t tick = t->tov_cycles;
    t->tov_top = 255;
    t->tov_cycles = 510 * tick;  // avr_timer_tov reschedules itself this far apart from its next overflow on
  }
}
