// A correction to Debian's simavr 1.6: its ATmega328P timers lack the phase-correct PWM modes the Arduino core puts
// Timer1 and Timer2 in (init(): WGM 1, prescaler 64), so it runs them as "invalid mode" with a top of 0, i.e. an
// overflow every 64 cycles on every board, asleep or not: most of a run's time, for timers these sketches never use.
#pragma once

struct avr_t;

// Once the sketch has set its timers up: gives an invalid-mode timer the period of phase-correct 8-bit PWM on a
// real chip (up to 255 and back down: an overflow every 510 prescaled ticks). No effect on other timers.
void fix_phase_correct_timers(struct avr_t* avr);
