// radio_sim: base_station.elf and N sensor_node.elf boards joined by simulated nRF24L01+ radios, in lockstep.
// Run through scripts/radio-sim, which builds a sensor_node variant per NODE_ID and passes the ELFs last.
#define _DEFAULT_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <simavr/sim_avr.h>

#include "../pty_link.h"
#include "lockstep.h"

static const char usage[] =
    "usage: radio-sim --nodes N [--sample-s S] --seconds T [--pty-link PATH] [-r] [--seed N] [--loss P]\n"
    "                 [--ack-loss P] [--corrupt P] [--drop-data|--drop-ack NODE:PKT[:N|all]]... [--trace FILE]\n"
    "                 (radio_sim itself then takes BASE.elf NODE1.elf ... NODEN.elf)\n"
    "stderr ends with: simulated_ms= delivered= lost= dup_dropped= acks_lost= collisions= max_rt=\n";

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

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int parse_probability(const char* text, double* out) {
  char* end;
  *out = strtod(text, &end);
  return *end || *out < 0 || *out > 1;
}

int main(int argc, char** argv) {
  enum { O_NODES = 256, O_SAMPLE, O_SECONDS, O_PTY, O_SEED, O_LOSS, O_ACK_LOSS, O_CORRUPT, O_DROP_DATA, O_DROP_ACK,
         O_TRACE };
  static const struct option options[] = {
      {"nodes", 1, 0, O_NODES}, {"sample-s", 1, 0, O_SAMPLE}, {"seconds", 1, 0, O_SECONDS},
      {"pty-link", 1, 0, O_PTY}, {"seed", 1, 0, O_SEED}, {"loss", 1, 0, O_LOSS}, {"ack-loss", 1, 0, O_ACK_LOSS},
      {"corrupt", 1, 0, O_CORRUPT}, {"drop-data", 1, 0, O_DROP_DATA}, {"drop-ack", 1, 0, O_DROP_ACK},
      {"trace", 1, 0, O_TRACE}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  int nodes = 0, realtime = 0, opt, bad = 0;
  double seconds = 0, sample_s = 60;  // the sketch's default SAMPLE_SECONDS
  const char *pty_path = NULL, *trace_path = NULL;
  faults_t faults = {.seed = 1};
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
      default: return fputs(usage, stderr), opt == 'h' ? 0 : 1;
    }
  }
  if (bad || nodes < 1 || nodes > 6 || seconds <= 0 || sample_s <= 0 || argc - optind != nodes + 1) {
    return fputs(usage, stderr), 1;
  }

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
    board_t* node = lockstep_add(sim, argv[optind + n], offset, 1, NODE_VCC_MV, adc_mv);
    if (!node) return 1;
    // Each node's clock off by up to +-0.5 % (the Uno's ceramic resonator; the watchdog's own oscillator, which
    // simavr derives from it, is +-10 % on a real chip): nodes that once collide drift apart again, as real ones do.
    node->clock_ppm = (int32_t)(10000 * rng_unit(&boot)) - 5000;
  }
  if (pty_path && (pty_fd = pty_link_open(pty_path, "radio-sim")) < 0) return 1;
  base->on_byte = pty_path ? base_to_pty : base_to_stdout;

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
  if (pty_path) unlink(pty_path);
  if (outcome == RUN_CRASHED) fprintf(stderr, "radio-sim: board %d crashed\n", sim->crashed_board);
  if (outcome == RUN_WATCHDOG) fprintf(stderr, "radio-sim: wall-clock watchdog after %.0f s\n", sim->wall_limit_s);
  // For scripts/radio-sim-bench: the simulation's own wall and CPU time, builds and loading excluded.
  fprintf(stderr, "# radio-sim: boards=%d wall_ms=%.0f cpu_ms=%.0f\n", sim->count, wall_ms() - sim->wall_start_ms,
          cpu_ms() - cpu_start);
  const air_stats_t* st = &sim->air.stats;
  fprintf(stderr, "simulated_ms=%llu delivered=%llu lost=%llu dup_dropped=%llu acks_lost=%llu collisions=%llu "
          "max_rt=%llu\n", (unsigned long long)(lockstep_now(sim) / TICKS_PER_MS),
          (unsigned long long)st->delivered, (unsigned long long)st->lost, (unsigned long long)st->dup_dropped,
          (unsigned long long)st->acks_lost, (unsigned long long)st->collisions, (unsigned long long)st->max_rt);
  return outcome == RUN_CRASHED ? 2 : outcome == RUN_WATCHDOG ? 3 : 0;
}
