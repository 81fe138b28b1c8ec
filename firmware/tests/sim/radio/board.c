#define _POSIX_C_SOURCE 200809L
#include "board.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simavr/avr_adc.h>
#include <simavr/avr_eeprom.h>
#include <simavr/avr_ioport.h>
#include <simavr/avr_spi.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_interrupts.h>

#define CPU_HZ 16000000
#define HEARTBEAT_CYCLES (100 * TICKS_PER_US)  // 100 us: a sleeping core never jumps further ahead than this
#define CE_BIT 1                                // PB1 = D9
#define CSN_BIT 2                               // PB2 = D10

static void keep_line(board_t* b) {
  if (b->line_count == b->line_capacity) {
    b->line_capacity = b->line_capacity ? 2 * b->line_capacity : 64;
    b->lines = realloc(b->lines, sizeof *b->lines * b->line_capacity);
    if (!b->lines) abort();
  }
  b->line[b->line_len] = 0;
  b->lines[b->line_count].t = b->line_t;
  b->lines[b->line_count].text = strdup(b->line);
  ++b->line_count;
  air_trace_line(b->radio.air, b->line_t, b->number, b->line);
  b->line_len = 0;
}

static void uart_out(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  board_t* b = param;
  if (b->on_byte) b->on_byte(b, (uint8_t)value, b->on_byte_ctx);
  if (value == '\r') return;
  if (b->line_len == 0) b->line_t = board_now(b);
  if (value == '\n') return keep_line(b);
  b->line[b->line_len++] = (char)value;
  if (b->line_len == sizeof b->line - 1) keep_line(b);
}

// simavr raises the byte the AVR shifted out; the reply goes back at once, as MISO shifts during the same clocks.
static void spi_out(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  board_t* b = param;
  if (!b->radio.attached) return;  // nothing drives MISO: the AVR reads 0
  uint8_t reply = nrf24_spi_byte(&b->radio, (uint8_t)value);
  avr_raise_irq(avr_io_getirq(b->avr, AVR_IOCTL_SPI_GETIRQ(0), SPI_IRQ_INPUT), reply);
}

static void ce_pin(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  board_t* b = param;
  nrf24_ce(&b->radio, (int)value);
}

static void csn_pin(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq;
  board_t* b = param;
  nrf24_csn(&b->radio, (int)value);
}

static avr_cycle_count_t heartbeat(struct avr_t* avr, avr_cycle_count_t when, void* param) {
  (void)avr;
  (void)param;
  return when + HEARTBEAT_CYCLES;
}

static avr_cycle_count_t radio_timer(struct avr_t* avr, avr_cycle_count_t when, void* param) {
  (void)avr;
  (void)when;
  nrf24_run_events(&((board_t*)param)->radio);
  return 0;  // run_events armed the next one
}

// simavr's own messages go to stderr, warnings and worse only: stdout carries the base station's UART.
static void log_to_stderr(avr_t* avr, const int level, const char* format, va_list ap) {
  (void)avr;
  if (level <= LOG_WARNING) vfprintf(stderr, format, ap);
}

// SPIClass::transfer's wait for SPIF: `in Rd, SPSR` / `sbrs Rd, 7` / `rjmp .-6`. Its flash address, or 0.
static avr_flashaddr_t find_spi_wait(const avr_t* avr) {
  for (avr_flashaddr_t pc = 0; pc + 6 <= avr->flashend; pc += 2) {
    uint16_t in = (uint16_t)(avr->flash[pc] | avr->flash[pc + 1] << 8);
    uint16_t sbrs = (uint16_t)(avr->flash[pc + 2] | avr->flash[pc + 3] << 8);
    uint16_t rjmp = (uint16_t)(avr->flash[pc + 4] | avr->flash[pc + 5] << 8);
    unsigned d = (in >> 4) & 0x1F, io = ((in >> 5) & 0x30) | (in & 0x0F);
    if ((in & 0xF800) == 0xB000 && io == 0x2D && sbrs == (0xFE07 | d << 4) && rjmp == 0xCFFD) return pc;
  }
  return 0;
}

static void no_host_sleep(avr_t* avr, avr_cycle_count_t how_long) {
  (void)avr;
  (void)how_long;  // simulated sleep costs no wall time; the runner paces -r itself
}

// What avr_reset clears and the board needs back: timers, UART flags, ADC inputs.
static void start(board_t* b) {
  uint32_t uart_flags = 0;  // no stdio echo, no host sleeping while the sketch polls the UART
  avr_ioctl(b->avr, AVR_IOCTL_UART_SET_FLAGS('0'), &uart_flags);
  for (int pin = 0; pin < 8; ++pin) {
    avr_raise_irq(avr_io_getirq(b->avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + pin), b->adc_mv[pin]);
  }
  avr_cycle_timer_register(b->avr, HEARTBEAT_CYCLES, heartbeat, b);
  if (b->radio.event_count) nrf24_run_events(&b->radio);
}

int board_init(board_t* b, int number, const char* elf, ticks_t offset, air_t* air, int with_radio,
               uint32_t vcc_mv, const uint32_t adc_mv[8]) {
  memset(b, 0, sizeof *b);
  b->number = number;
  b->offset = offset;
  avr_global_logger_set(log_to_stderr);
  elf_firmware_t firmware;
  memset(&firmware, 0, sizeof firmware);
  if (elf_read_firmware(elf, &firmware)) return fprintf(stderr, "radio-sim: cannot read %s\n", elf), -1;
  b->avr = avr_make_mcu_by_name("atmega328p");
  if (!b->avr) return -1;
  avr_init(b->avr);
  firmware.frequency = CPU_HZ;
  avr_load_firmware(b->avr, &firmware);
  b->avr->sleep = no_host_sleep;
  b->avr->vcc = b->avr->avcc = b->avr->aref = vcc_mv;
  memcpy(b->adc_mv, adc_mv, sizeof b->adc_mv);
  b->spi_wait_pc = find_spi_wait(b->avr);

  nrf24_init(&b->radio, b, air, number);
  b->radio.attached = with_radio;
  air_attach(air, &b->radio);
  avr_t* avr = b->avr;
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uart_out, b);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_SPI_GETIRQ(0), SPI_IRQ_OUTPUT), spi_out, b);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('B'), CE_BIT), ce_pin, b);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('B'), CSN_BIT), csn_pin, b);
  start(b);
  return 0;
}

void board_free(board_t* b) {
  for (size_t i = 0; i < b->line_count; ++i) free(b->lines[i].text);
  free(b->lines);
  b->lines = NULL;
}

// Simulated time is cheap only where the core sleeps. simavr 1.6 takes 100 us for every SPI byte, which the
// sketches spend spinning on SPIF; that loop has no effect but its cycles, so while SPIF is clear and no
// interrupt is pending the core skips, in whole 4-cycle turns of the loop, to just before the next timer (the SPI
// completion, the heartbeat or a radio event), as a sleeping core would. The jump is a step of its own, so the
// runner re-checks which board is furthest behind.
int board_step(board_t* b) {
  avr_t* avr = b->avr;
  if (b->spi_wait_pc && avr->pc == b->spi_wait_pc && avr->state == cpu_Running && !(avr->data[0x4D] & 0x80) &&
      !avr_has_pending_interrupts(avr)) {
    avr_cycle_count_t next = 0;
    for (avr_cycle_timer_slot_p t = avr->cycle_timers.timer; t; t = t->next) {
      if (!next || t->when < next) next = t->when;
    }
    if (next > avr->cycle + 8) {
      avr->cycle += (next - avr->cycle - 4) / 4 * 4;
      return avr->state;
    }
  }
  return avr_run(avr);
}

int board_sleeping(const board_t* b) { return b->avr->state == cpu_Sleeping; }

uint64_t board_cycle_at(const board_t* b, ticks_t t) {
  uint64_t cycle = t - b->offset;
  if (b->clock_ppm) {
    cycle = cycle * 1000000 / (uint64_t)(1000000 + b->clock_ppm);
    while (cycle && board_time_at(b, cycle - 1) >= t) --cycle;
    while (board_time_at(b, cycle) < t) ++cycle;
  }
  return cycle;
}

void board_wake_radio_at(board_t* b, ticks_t t) {
  uint64_t cycle = t > board_now(b) ? board_cycle_at(b, t) : b->avr->cycle;
  avr_cycle_timer_register(b->avr, cycle - b->avr->cycle, radio_timer, b);
}

void board_reset(board_t* b) {
  avr_reset(b->avr);  // keeps the cycle count, so the board's clock runs on
  b->avr->state = cpu_Running;
  b->line_len = 0;
  start(b);
}

void board_set_radio(board_t* b, int attached) {
  if (attached && !b->radio.attached) {
    nrf24_power_on_reset(&b->radio);
    b->radio.powered_ticks = 0;
  }
  b->radio.attached = attached;
}

// simavr 1.6's EEPROM ioctls return -1 even when they did their work: the bytes read back are the check.
int board_write_eeprom(board_t* b, uint16_t offset, const uint8_t* data, uint32_t size) {
  uint8_t back[64];
  if (size > sizeof back) return -1;
  avr_eeprom_desc_t set = {.ee = (uint8_t*)data, .offset = offset, .size = size};
  avr_eeprom_desc_t get = {.ee = back, .offset = offset, .size = size};
  avr_ioctl(b->avr, AVR_IOCTL_EEPROM_SET, &set);
  avr_ioctl(b->avr, AVR_IOCTL_EEPROM_GET, &get);
  return memcmp(back, data, size) != 0;
}
