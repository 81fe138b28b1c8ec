// One simulated Uno: a compiled sketch on simavr's ATmega328P at 16 MHz, its UART0 cut into lines stamped with
// simulated time, ADC inputs in millivolts, and an nRF24L01+ on SPI with CE on D9 (PB1) and CSN on D10 (PB2).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <simavr/sim_avr.h>

#include "nrf24.h"
#include "sim_time.h"

typedef struct {
  ticks_t t;  // simulated time of the line's first byte
  char* text; // without the line ending
} board_line_t;

typedef struct board {
  struct avr_t* avr;
  int number;              // 0 = base station, n = sensor node n
  ticks_t offset;          // simulated time at which this board's clock started
  int32_t clock_ppm;       // how fast this board's clock runs against the simulation's, in parts per million
  uint32_t spi_wait_pc;    // flash address of the SPIF polling loop, skipped through (board_step), or 0
  uint32_t adc_mv[8];      // analog inputs A0-A7, re-applied after a reset
  nrf24_t radio;
  char line[256];
  size_t line_len;
  ticks_t line_t;
  board_line_t* lines;     // every UART line so far
  size_t line_count, line_capacity;
  void (*on_byte)(struct board* b, uint8_t byte, void* ctx);  // raw UART bytes (the base station's stdout/pty)
  void* on_byte_ctx;
} board_t;

// Loads `elf` and starts its clock at `offset`; the radio is wired but attached only if `with_radio`.
int board_init(board_t* b, int number, const char* elf, ticks_t offset, air_t* air, int with_radio,
               uint32_t vcc_mv, const uint32_t adc_mv[8]);
void board_free(board_t* b);
// The board's cycle count on the shared time line: a clock off by clock_ppm runs that much faster or slower.
static inline ticks_t board_time_at(const board_t* b, uint64_t cycle) {
  return b->offset + cycle + (ticks_t)((int64_t)cycle * b->clock_ppm / 1000000);
}
static inline ticks_t board_now(const board_t* b) { return board_time_at(b, b->avr->cycle); }
uint64_t board_cycle_at(const board_t* b, ticks_t t);  // the first cycle at or after time t (t >= b->offset)
int board_step(board_t* b);              // one instruction (or one sleep until the next timer): simavr's state
int board_sleeping(const board_t* b);
void board_wake_radio_at(board_t* b, ticks_t t);
void board_reset(board_t* b);            // the MCU resets; the radio keeps its power and state
void board_set_radio(board_t* b, int attached);  // plug the radio in (power-on reset) or pull it out
// Writes EEPROM bytes, as an ISP programmer would before the board runs; they survive board_reset. 0 on success.
int board_write_eeprom(board_t* b, uint16_t offset, const uint8_t* data, uint32_t size);
