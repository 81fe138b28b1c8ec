// sim_uno: runs a compiled sketch (.elf) on simavr's ATmega328P at 16 MHz, like an Arduino Uno on a USB port.
// UART0 goes to stdout, or to a pseudo-terminal a gateway opens like /dev/ttyUSB0 (-p PATH); ADC inputs are set
// in millivolts. Written on libsimavr because the stock `simavr` CLI can neither set ADC inputs nor bridge the
// UART to a pty without the races of its uart_pty part.
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_adc.h>
#include <simavr/avr_eeprom.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_hex.h>

#include "pty_link.h"

#define CPU_HZ 16000000ULL
#define CYCLES_PER_MS (CPU_HZ / 1000)

static const char usage[] =
    "usage: sim_uno [-m SIM_MS] [-a PIN=MV]... [-v VCC_MV] [-e EEPROM.eep] [-E K] [-o EEPROM.eep] "
    "[-p PTY_LINK [-R]] [-r] [-T] [-w WALL_S] firmware.elf\n"
    "  -m SIM_MS   stop after SIM_MS simulated milliseconds (default: until SIGTERM/SIGINT)\n"
    "  -a PIN=MV   analog input A<PIN> (0-7) held at MV millivolts (repeatable; default 0)\n"
    "  -v VCC_MV   supply voltage Vcc = AVcc = AREF (default 5000)\n"
    "  -e FILE     EEPROM contents from an Intel HEX image, as avrdude -U eeprom:w:FILE:i writes them (else erased)\n"
    "  -E K        cut the power right after the K-th EEPROM byte write (state=eeprom): that byte is written, the\n"
    "              next is not\n"
    "  -o FILE     at the end, write the whole EEPROM as an Intel HEX image (for -e on the next boot)\n"
    "  -p PATH     expose UART0 on a pseudo-terminal and make PATH a symlink to it (else UART0 -> stdout)\n"
    "  -R          reset the board when the pty is opened (DTR on an Uno); its sketch starts 500 ms later\n"
    "  -T          prefix each stdout line with [simulated ms]\n"
    "  -r          pace simulated time to wall-clock time (else as fast as the host runs)\n"
    "  -w WALL_S   wall-clock watchdog: give up after WALL_S seconds, exit 3 (default 120)\n"
    "stderr ends with: # sim: simulated_ms=N wall_ms=N state=done|time|signal|crashed|watchdog|eeprom "
    "eeprom_writes=N\n";

static volatile sig_atomic_t stop_requested;
static int pty_master = -1;
static int open_watch = -1;    // -R: inotify on the pty's slave side, which reports each open
static int uart_input_ready;  // simavr's UART fifo has room (XON seen after XOFF)
static int timestamps;        // -T: prefix each stdout line with the simulated ms at its first byte
static avr_t* board;
static char line_buf[512];
static size_t line_len;

// EEPROM byte writes, counted at the EECR strobe that simavr's EEPROM model (avr_eeprom.c) takes as a write: EEPE
// written while EEMPE is still set. simavr stores the byte at that strobe, at once and whole, so stopping right after
// it cuts the power exactly between two byte writes.
#define EECR_ADDR 0x3F /* ATmega328P: EECR is I/O 0x1F */
#define EEPE_BIT 0x02
#define EEMPE_BIT 0x04
static avr_io_write_t eeprom_module_write;
static void* eeprom_module_param;
static unsigned long eeprom_writes;
static unsigned long eeprom_cut_after;  // -E K: 0 = never
static int eeprom_cut;
static uint8_t* eeprom_bytes;  // simavr's own buffer
#define EEPROM_SIZE 1024

static void on_signal(int sig) {
  (void)sig, stop_requested = 1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// stdout: flush per line so a reader sees whole lines promptly.
static void uart_to_stdout(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq, (void)param;
  if (timestamps && line_len == 0) {
    fprintf(stdout, "[%llu] ", (unsigned long long)(board->cycle / CYCLES_PER_MS));
  }
  line_buf[line_len++] = (char)value;
  if (value == '\n' || line_len == sizeof line_buf) {
    fwrite(line_buf, 1, line_len, stdout);
    fflush(stdout);
    line_len = 0;
  }
}

// pty: like a UART nobody listens to, bytes the reader does not take are dropped rather than blocking the board.
static void uart_to_pty(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq, (void)param;
  uint8_t byte = (uint8_t)value;
  if (write(pty_master, &byte, 1) < 0 && errno != EAGAIN && errno != EIO) perror("sim_uno: pty write");
}

// simavr's UART input fifo: XON = room for bytes, XOFF = full.
static void uart_flow(struct avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq, (void)value;
  uart_input_ready = param != NULL;
}

// simavr's own messages go to stderr at warning level and above, so stdout carries only the board's UART.
static void log_to_stderr(avr_t* avr, const int level, const char* format, va_list ap) {
  (void)avr;
  if (level <= LOG_WARNING) vfprintf(stderr, format, ap);
}

static void no_host_sleep(avr_t* avr, avr_cycle_count_t how_long) {
  (void)avr, (void)how_long;  // simulated sleep costs no host time; -r paces in the main loop instead
}

// Bytes a gateway writes to the pty go to the board's UART0 input, as fast as its fifo takes them.
static void pump_pty_input(avr_irq_t* uart_in) {
  uint8_t byte;
  while (uart_input_ready && read(pty_master, &byte, 1) == 1) avr_raise_irq(uart_in, byte);
}

// At power-up and after each reset (which keeps the EEPROM): the ADC inputs, and no console echo and no host
// sleeping while the sketch polls the UART.
static void start_board(avr_t* avr, const long adc_mv[8]) {
  uint32_t uart_flags = 0;
  avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &uart_flags);
  for (int pin = 0; pin < 8; ++pin) {
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + pin), (uint32_t)adc_mv[pin]);
  }
}

// -R: opening the port resets an Uno (DTR), whose bootloader waits, silent, before the sketch starts: held in wall
// time, outside -r pacing, so a host dropping stale input right after the open never cuts the sketch's first line.
#define BOOTLOADER_WAIT_MS 500
static double reset_by_port(avr_t* avr, const long adc_mv[8]) {
  usleep(BOOTLOADER_WAIT_MS * 1000);
  avr_reset(avr);
  avr->state = cpu_Running;
  start_board(avr, adc_mv);
  return BOOTLOADER_WAIT_MS;
}

static void eecr_write(avr_t* avr, avr_io_addr_t addr, uint8_t v, void* param) {
  (void)param;
  int armed = (avr->data[EECR_ADDR] & EEMPE_BIT) != 0;
  eeprom_module_write(avr, addr, v, eeprom_module_param);
  if (armed && (v & EEPE_BIT)) {
    ++eeprom_writes;
    if (eeprom_cut_after && eeprom_writes == eeprom_cut_after) eeprom_cut = 1;
  }
}

// Puts the counter in front of simavr's EEPROM module and finds its buffer (AVR_IOCTL_EEPROM_GET without a
// buffer hands out the module's own; its SET refuses a range that ends on the last byte).
static int hook_eeprom(avr_t* avr) {
  avr_eeprom_desc_t desc = {.ee = NULL, .offset = 0, .size = 0};
  avr_ioctl(avr, AVR_IOCTL_EEPROM_GET, &desc);
  eeprom_bytes = desc.ee;
  eeprom_module_write = avr->io[AVR_DATA_TO_IO(EECR_ADDR)].w.c;
  eeprom_module_param = avr->io[AVR_DATA_TO_IO(EECR_ADDR)].w.param;
  if (!eeprom_bytes || !eeprom_module_write) return fputs("sim_uno: simavr's EEPROM module not found\n", stderr), -1;
  avr->io[AVR_DATA_TO_IO(EECR_ADDR)].w.c = eecr_write;
  avr->io[AVR_DATA_TO_IO(EECR_ADDR)].w.param = NULL;
  return 0;
}

// The bytes of an Intel HEX image into the EEPROM; the rest stays erased (0xFF), as on a real chip.
static int load_eeprom(const char* path) {
  ihex_chunk_p chunks = NULL;
  int count = read_ihex_chunks(path, &chunks);
  if (count < 0) return fprintf(stderr, "sim_uno: cannot read EEPROM image %s\n", path), -1;
  for (int i = 0; i < count; ++i) {
    if (chunks[i].baseaddr + chunks[i].size > EEPROM_SIZE) {
      free_ihex_chunks(chunks);
      return fprintf(stderr, "sim_uno: %s goes past the 1024-byte EEPROM\n", path), -1;
    }
    memcpy(eeprom_bytes + chunks[i].baseaddr, chunks[i].data, chunks[i].size);
  }
  free_ihex_chunks(chunks);
  return 0;
}

// The whole EEPROM as Intel HEX, 16 data bytes a record, as avr-objcopy writes .eep files.
static int save_eeprom(const char* path) {
  FILE* out = fopen(path, "w");
  if (!out) return fprintf(stderr, "sim_uno: cannot write %s: %s\n", path, strerror(errno)), -1;
  for (unsigned at = 0; at < EEPROM_SIZE; at += 16) {
    unsigned sum = 16 + (at >> 8) + (at & 0xFF);
    fprintf(out, ":10%04X00", at);
    for (unsigned i = 0; i < 16; ++i) {
      fprintf(out, "%02X", eeprom_bytes[at + i]);
      sum += eeprom_bytes[at + i];
    }
    fprintf(out, "%02X\n", (256 - sum % 256) % 256);
  }
  fputs(":00000001FF\n", out);
  return fclose(out) ? -1 : 0;
}

int main(int argc, char** argv) {
  long sim_ms = 0, vcc_mv = 5000, wall_limit_s = 120;
  long adc_mv[8] = {0};
  const char *pty_link = NULL, *eeprom_image = NULL, *eeprom_out = NULL;
  int realtime = 0, reset_on_open = 0, opt;
  while ((opt = getopt(argc, argv, "m:a:v:e:E:o:p:RrTw:h")) != -1) {
    long pin, mv;  // -a PIN=MV
    switch (opt) {
      case 'm': sim_ms = atol(optarg); break;
      case 'v': vcc_mv = atol(optarg); break;
      case 'p': pty_link = optarg; break;
      case 'e': eeprom_image = optarg; break;
      case 'E': eeprom_cut_after = strtoul(optarg, NULL, 10); break;
      case 'o': eeprom_out = optarg; break;
      case 'r': realtime = 1; break;
      case 'R': reset_on_open = 1; break;
      case 'T': timestamps = 1; break;
      case 'w': wall_limit_s = atol(optarg); break;
      case 'a':
        if (sscanf(optarg, "%ld=%ld", &pin, &mv) != 2 || pin < 0 || pin > 7) return fputs(usage, stderr), 1;
        adc_mv[pin] = mv;
        break;
      default: return fputs(usage, stderr), opt == 'h' ? 0 : 1;
    }
  }
  if (optind != argc - 1 || (sim_ms <= 0 && !pty_link) || (reset_on_open && !pty_link)) {
    return fputs(usage, stderr), 1;
  }

  avr_global_logger_set(log_to_stderr);
  elf_firmware_t firmware;
  memset(&firmware, 0, sizeof firmware);
  if (elf_read_firmware(argv[optind], &firmware)) return fprintf(stderr, "sim_uno: cannot read %s\n", argv[optind]), 1;
  avr_t* avr = avr_make_mcu_by_name("atmega328p");
  if (!avr) return fputs("sim_uno: simavr has no atmega328p\n", stderr), 1;
  avr_init(avr);
  board = avr;
  firmware.frequency = CPU_HZ;
  avr_load_firmware(avr, &firmware);
  avr->sleep = no_host_sleep;
  avr->vcc = avr->avcc = avr->aref = (uint32_t)vcc_mv;
  if (hook_eeprom(avr) || (eeprom_image && load_eeprom(eeprom_image))) return 1;

  start_board(avr, adc_mv);
  avr_irq_t* uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), uart_flow, (void*)1);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), uart_flow, NULL);
  if (pty_link && (pty_master = pty_link_open(pty_link, "sim")) < 0) return 1;
  if (reset_on_open && (open_watch = pty_link_watch_opens(pty_master, "sim")) < 0) return 1;
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                          pty_link ? uart_to_pty : uart_to_stdout, NULL);

  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);

  const avr_cycle_count_t end_cycle = sim_ms > 0 ? (avr_cycle_count_t)sim_ms * CYCLES_PER_MS : 0;
  const double wall_start = now_ms();
  double held_ms = 0;  // -R's bootloader waits
  avr_cycle_count_t next_check = CYCLES_PER_MS;
  const char* outcome = "time";
  int state = cpu_Running;
  for (;;) {
    state = avr_run(avr);
    if (state == cpu_Done || state == cpu_Crashed) {
      outcome = state == cpu_Done ? "done" : "crashed";
      break;
    }
    if (eeprom_cut) {
      outcome = "eeprom";
      break;
    }
    if (end_cycle && avr->cycle >= end_cycle) break;
    if (avr->cycle < next_check) continue;
    next_check = avr->cycle + CYCLES_PER_MS;  // once per simulated ms: signals, watchdog, pty input, pacing
    if (stop_requested) {
      outcome = "signal";
      break;
    }
    double wall = now_ms() - wall_start - held_ms;
    if (wall > wall_limit_s * 1000.0) {
      outcome = "watchdog";
      break;
    }
    if (open_watch >= 0 && pty_link_opened(open_watch)) held_ms += reset_by_port(avr, adc_mv);
    if (pty_link) pump_pty_input(uart_in);
    if (realtime) {
      double ahead_ms = avr->cycle / (double)CYCLES_PER_MS - wall;
      if (ahead_ms > 1) usleep((useconds_t)(ahead_ms * 1000));
    }
  }
  if (line_len) fwrite(line_buf, 1, line_len, stdout);
  fflush(stdout);
  if (eeprom_out && save_eeprom(eeprom_out)) return 1;
  fprintf(stderr, "# sim: simulated_ms=%llu wall_ms=%.0f state=%s eeprom_writes=%lu\n",
          (unsigned long long)(avr->cycle / CYCLES_PER_MS), now_ms() - wall_start, outcome, eeprom_writes);
  if (pty_link) unlink(pty_link);
  if (!strcmp(outcome, "crashed")) return 2;
  if (!strcmp(outcome, "watchdog")) return 3;
  return 0;
}
