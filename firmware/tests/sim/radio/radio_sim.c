// radio_sim: base_station.elf and N sensor_node.elf boards joined by simulated nRF24L01+ radios, in lockstep.
// Run through scripts/radio-sim, which builds a sensor_node variant per NODE_ID and passes the ELFs last.
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_eeprom.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_hex.h>

#include "../pty_link.h"
#include "attack.h"
#include "keys.h"
#include "lockstep.h"
#include "../../../src/telemetry/eeprom_layout.h"

static const char usage[] =
    "usage: radio-sim --nodes N [--sample-s S] --seconds T [--pty-link PATH] [-r] [--seed N] [--loss P]\n"
    "                 [--ack-loss P] [--corrupt P] [--drop-data|--drop-ack NODE:PKT[:N|all]]... [--trace FILE]\n"
    "                 [--keys FILE] [--eeprom NODE:FILE]... [--attack forge|replay[,...]] [--reboot-node NODE:S]... [--reboot-base S]...\n"
    "                 [--analog NODE:PIN=MV]...\n"
    "                 (radio_sim itself then takes BASE.elf NODE1.elf ... NODEN.elf)\n"
    "stderr ends with: simulated_ms= delivered= lost= dup_dropped= acks_lost= collisions= max_rt= forged= replayed=\n";

// Node n's analog inputs in mV at a 3.3 V supply (A0 temp_in, A1 temp_out, A2 light, A3 humidity), fixed so a
// test can compute what each node must report; README.md lists them.
#define NODE_VCC_MV 3300
static void node_inputs(int n, uint32_t adc_mv[8]) {
  memset(adc_mv, 0, 8 * sizeof adc_mv[0]);
  adc_mv[0] = 1500 + 60 * (uint32_t)n;
  adc_mv[1] = 1700 - 40 * (uint32_t)n;
  adc_mv[2] = 600 + 300 * (uint32_t)n;
  adc_mv[3] = 1400 + 50 * (uint32_t)n;
}

// --analog NODE:PIN=MV: node NODE's analog input PIN (0-7) at MV instead (e.g. a frost night on A0, temp_in).
typedef struct {
  int node, pin;
  uint32_t mv;
} analog_t;
#define MAX_ANALOG 48
static analog_t analog[MAX_ANALOG];
static int analog_count;

static int add_analog(const char* spec) {
  char* end;
  long node = strtol(spec, &end, 10), pin = -1, mv = -1;
  if (*end == ':') pin = strtol(end + 1, &end, 10);
  if (*end == '=') mv = strtol(end + 1, &end, 10);
  if (*end || node < 1 || node > 6 || pin < 0 || pin > 7 || mv < 0 || mv > NODE_VCC_MV || analog_count == MAX_ANALOG) {
    return -1;
  }
  analog[analog_count++] = (analog_t){(int)node, (int)pin, (uint32_t)mv};
  return 0;
}

static volatile int stop_requested;
static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static int pty_fd = -1;
static void base_to_stdout(board_t* b, uint8_t byte, void* ctx) {
  (void)b;
  (void)ctx;
  putchar(byte);
  if (byte == '\n') fflush(stdout);
}
// Like a UART nobody listens to: bytes the reader does not take are dropped rather than blocking the board.
static void base_to_pty(board_t* b, uint8_t byte, void* ctx) {
  (void)b;
  (void)ctx;
  if (write(pty_fd, &byte, 1) < 0 && errno != EAGAIN && errno != EIO) perror("radio-sim: pty write");
}

// Scheduled MCU resets (--reboot-node, --reboot-base): the board restarts, its radio and EEPROM keep their state.
#define MAX_REBOOTS 16
typedef struct {
  lockstep_t* sim;
  attack_t* attack;  // NULL without --attack
  struct {
    int board;
    ticks_t at;
    int done;
  } reboots[MAX_REBOOTS];
  int reboot_count;
} schedule_t;

static int add_reboot(schedule_t* s, int board, const char* seconds) {
  char* end;
  double t = strtod(seconds, &end);
  if (*end || t <= 0 || s->reboot_count == MAX_REBOOTS) return -1;
  s->reboots[s->reboot_count].board = board;
  s->reboots[s->reboot_count].at = (ticks_t)(t * 1000 * TICKS_PER_MS);
  ++s->reboot_count;
  return 0;
}

static int add_node_reboot(schedule_t* s, const char* spec) {
  char* end;
  long node = strtol(spec, &end, 10);
  return *end == ':' && node >= 1 && node <= 6 ? add_reboot(s, (int)node, end + 1) : -1;
}

static void every_ms(void* ctx) {
  schedule_t* s = ctx;
  ticks_t now = lockstep_now(s->sim);
  for (int i = 0; i < s->reboot_count; ++i) {
    if (s->reboots[i].done || now < s->reboots[i].at || s->reboots[i].board >= s->sim->count) continue;
    board_reset(&s->sim->boards[s->reboots[i].board]);
    s->reboots[i].done = 1;
    if (s->attack && s->reboots[i].board > 0) attack_node_rebooted(s->attack, s->reboots[i].board, now);
  }
  if (s->attack) attack_tick(s->attack, &s->sim->air, now);
}

// The reader may be a little behind: closing the pty would throw away what it has not read yet, the run's last
// lines. So wait, up to 2 s, until the slave side holds no unread byte (seen through a second open of it; where
// that is refused, e.g. TIOCEXCL without root, a fixed 0.5 s). The kernel hands written bytes to the slave's queue
// a moment later, hence the first pause.
static void drain_pty(void) {
  usleep(100000);
  int slave = open(ptsname(pty_fd), O_RDWR | O_NOCTTY | O_NONBLOCK);
  if (slave < 0) {
    usleep(400000);
    return;
  }
  int pending = 1;
  for (int i = 0; i < 200 && !ioctl(slave, FIONREAD, &pending) && pending > 0; ++i) usleep(10000);
  close(slave);
}

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// --eeprom NODE:FILE: node NODE boots with the EEPROM of an Intel HEX image (sim_uno -o writes one), e.g. a board
// provisioned over its serial line (scripts/provision). Read whole through the module's own buffer: simavr's
// EEPROM_SET refuses a range ending on the last byte.
static int load_eeprom(board_t* b, const char* path) {
  avr_eeprom_desc_t desc = {.ee = NULL, .offset = 0, .size = 0};
  avr_ioctl(b->avr, AVR_IOCTL_EEPROM_GET, &desc);
  ihex_chunk_p chunks = NULL;
  int count = read_ihex_chunks(path, &chunks), bad = count < 0 || !desc.ee;
  for (int i = 0; !bad && i < count; ++i) {
    bad = chunks[i].baseaddr + chunks[i].size > 1024;
    if (!bad) memcpy(desc.ee + chunks[i].baseaddr, chunks[i].data, chunks[i].size);
  }
  if (count > 0) free_ihex_chunks(chunks);
  return bad ? fprintf(stderr, "radio-sim: cannot load EEPROM image %s\n", path), -1 : 0;
}

static int parse_node_file(const char* text, const char* files[KEYS_MAX_NODE + 1]) {
  int n = atoi(text);
  const char* colon = strchr(text, ':');
  if (n < 1 || n > KEYS_MAX_NODE || !colon || !colon[1]) return 1;
  files[n] = colon + 1;
  return 0;
}

static int parse_probability(const char* text, double* out) {
  char* end;
  *out = strtod(text, &end);
  return *end || *out < 0 || *out > 1;
}

int main(int argc, char** argv) {
  enum { O_NODES = 256, O_SAMPLE, O_SECONDS, O_PTY, O_SEED, O_LOSS, O_ACK_LOSS, O_CORRUPT, O_DROP_DATA, O_DROP_ACK,
         O_TRACE, O_KEYS, O_ATTACK, O_REBOOT_NODE, O_REBOOT_BASE, O_EEPROM, O_ANALOG };
  static const struct option options[] = {
      {"nodes", 1, 0, O_NODES}, {"sample-s", 1, 0, O_SAMPLE}, {"seconds", 1, 0, O_SECONDS},
      {"pty-link", 1, 0, O_PTY}, {"seed", 1, 0, O_SEED}, {"loss", 1, 0, O_LOSS}, {"ack-loss", 1, 0, O_ACK_LOSS},
      {"corrupt", 1, 0, O_CORRUPT}, {"drop-data", 1, 0, O_DROP_DATA}, {"drop-ack", 1, 0, O_DROP_ACK},
      {"trace", 1, 0, O_TRACE}, {"keys", 1, 0, O_KEYS}, {"attack", 1, 0, O_ATTACK},
      {"reboot-node", 1, 0, O_REBOOT_NODE}, {"reboot-base", 1, 0, O_REBOOT_BASE}, {"eeprom", 1, 0, O_EEPROM},
      {"analog", 1, 0, O_ANALOG}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  int nodes = 0, realtime = 0, opt, bad = 0;
  double seconds = 0, sample_s = 60;  // the sketch's default SAMPLE_SECONDS
  const char *pty_path = NULL, *trace_path = NULL, *keys_path = NULL, *eeprom_paths[KEYS_MAX_NODE + 1] = {0};
  faults_t faults = {.seed = 1};
  static schedule_t schedule;
  static attack_t attack;
  int attacking = 0;
  while ((opt = getopt_long(argc, argv, "rh", options, NULL)) != -1) {
    switch (opt) {
      case O_NODES: nodes = atoi(optarg); break;
      case O_SAMPLE: sample_s = atof(optarg); break;  // built into the node ELFs; here it spreads the boots
      case O_SECONDS: seconds = atof(optarg); break;
      case O_PTY: pty_path = optarg; break;
      case 'r': realtime = 1; break;
      case O_SEED: faults.seed = strtoull(optarg, NULL, 10); break;
      case O_LOSS: bad |= parse_probability(optarg, &faults.loss); break;
      case O_ACK_LOSS: bad |= parse_probability(optarg, &faults.ack_loss); break;
      case O_CORRUPT: bad |= parse_probability(optarg, &faults.corrupt); break;
      case O_DROP_DATA: bad |= faults_add_drop(&faults, optarg, 0) != 0; break;
      case O_DROP_ACK: bad |= faults_add_drop(&faults, optarg, 1) != 0; break;
      case O_TRACE: trace_path = optarg; break;
      case O_KEYS: keys_path = optarg; break;
      case O_EEPROM: bad |= parse_node_file(optarg, eeprom_paths); break;
      case O_ATTACK: bad |= attack_parse(&attack, optarg) != 0, attacking = 1; break;
      case O_REBOOT_NODE: bad |= add_node_reboot(&schedule, optarg) != 0; break;
      case O_REBOOT_BASE: bad |= add_reboot(&schedule, 0, optarg) != 0; break;
      case O_ANALOG: bad |= add_analog(optarg) != 0; break;
      default: return fputs(usage, stderr), opt == 'h' ? 0 : 1;
    }
  }
  if (bad || nodes < 1 || nodes > 6 || seconds <= 0 || sample_s <= 0 || argc - optind != nodes + 1) {
    return fputs(usage, stderr), 1;
  }

  static uint8_t keys[KEYS_MAX_NODE + 1][KEY_SIZE];
  static int have_key[KEYS_MAX_NODE + 1];
  if (keys_path && keys_load(keys_path, keys, have_key)) return 1;

  FILE* trace = trace_path ? fopen(trace_path, "w") : NULL;
  if (trace_path && !trace) return perror(trace_path), 1;
  lockstep_t* sim = calloc(1, sizeof *sim);
  lockstep_init(sim, &faults, trace);
  rng_t boot;  // a stream of its own: the boot offsets do not move when the fault settings change
  rng_seed(&boot, faults.seed ^ 0xB007);
  static const uint32_t base_inputs[8];
  board_t* base = lockstep_add(sim, argv[optind], 0, 1, 5000, base_inputs);
  if (!base) return 1;
  for (int n = 1; n <= nodes; ++n) {
    // Nodes switched on at seeded moments within one sample period, from 100 ms on (the base station listens by
    // then): identical nodes booted together would transmit together for ever.
    ticks_t offset = (ticks_t)((0.1 + sample_s * rng_unit(&boot)) * 1000 * TICKS_PER_MS);
    uint32_t adc_mv[8];
    node_inputs(n, adc_mv);
    for (int i = 0; i < analog_count; ++i) {
      if (analog[i].node == n) adc_mv[analog[i].pin] = analog[i].mv;
    }
    board_t* node = lockstep_add(sim, argv[optind + n], offset, 1, NODE_VCC_MV, adc_mv);
    if (!node) return 1;
    // Provisioned as `make upload KEY_FILE=` does: the key only; the counter reservation stays erased.
    if (have_key[n] && board_write_eeprom(node, TELEMETRY_EEPROM_KEY_OFFSET, keys[n], KEY_SIZE)) {
      return fprintf(stderr, "radio-sim: cannot write node %d's EEPROM\n", n), 1;
    }
    if (eeprom_paths[n] && load_eeprom(node, eeprom_paths[n])) return 1;
    // Each node's clock off by up to +-0.5 % (the Uno's ceramic resonator; the watchdog's own oscillator, which
    // simavr derives from it, is +-10 % on a real chip): nodes that once collide drift apart again, as real ones do.
    node->clock_ppm = (int32_t)(10000 * rng_unit(&boot)) - 5000;
  }
  if (pty_path && (pty_fd = pty_link_open(pty_path, "radio-sim")) < 0) return 1;
  base->on_byte = pty_path ? base_to_pty : base_to_stdout;

  schedule.sim = sim;
  if (attacking) {
    schedule.attack = &attack;
    memcpy(attack.keys, keys, sizeof keys);
    memcpy(attack.have_key, have_key, sizeof have_key);
    attack_start(&attack, &sim->air, nodes, faults.seed, (ticks_t)(sample_s * 1000 * TICKS_PER_MS));
    // A base station that restarts drops what its radio holds: no attack packet then, so every one that
    // reached the radio reaches the serial line too.
    for (int i = 0; i < schedule.reboot_count; ++i) {
      ticks_t at = schedule.reboots[i].at;
      if (schedule.reboots[i].board == 0) {
        attack_quiet(&attack, at > US(100000) ? at - US(100000) : 0, at + US(1500000));
      }
    }
  }
  sim->every_ms = every_ms;
  sim->every_ms_ctx = &schedule;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  sim->stop = &stop_requested;
  sim->realtime = realtime;
  sim->wall_limit_s = 60 + (realtime ? 1 : 4) * seconds;
  double cpu_start = cpu_ms();
  sim->wall_start_ms = wall_ms();
  int outcome = lockstep_run_until(sim, (ticks_t)(seconds * 1000 * TICKS_PER_MS));
  lockstep_finish(sim);
  fflush(stdout);
  if (trace) fclose(trace);
  if (pty_path) {
    drain_pty();
    unlink(pty_path);
  }
  if (outcome == RUN_CRASHED) fprintf(stderr, "radio-sim: board %d crashed\n", sim->crashed_board);
  if (outcome == RUN_WATCHDOG) fprintf(stderr, "radio-sim: wall-clock watchdog after %.0f s\n", sim->wall_limit_s);
  // For scripts/radio-sim-bench: the simulation's own wall and CPU time, builds and loading excluded.
  fprintf(stderr, "# radio-sim: boards=%d wall_ms=%.0f cpu_ms=%.0f\n", sim->count, wall_ms() - sim->wall_start_ms,
          cpu_ms() - cpu_start);
  const air_stats_t* st = &sim->air.stats;
  fprintf(stderr, "simulated_ms=%llu delivered=%llu lost=%llu dup_dropped=%llu acks_lost=%llu collisions=%llu "
          "max_rt=%llu forged=%llu replayed=%llu\n", (unsigned long long)(lockstep_now(sim) / TICKS_PER_MS),
          (unsigned long long)st->delivered, (unsigned long long)st->lost, (unsigned long long)st->dup_dropped,
          (unsigned long long)st->acks_lost, (unsigned long long)st->collisions, (unsigned long long)st->max_rt,
          (unsigned long long)st->forged, (unsigned long long)st->replayed);
  return outcome == RUN_CRASHED ? 2 : outcome == RUN_WATCHDOG ? 3 : 0;
}
