// The air. Causality: the runner always steps the board furthest behind, and a sleeping board wakes every 100 us,
// so when a receiver looks at a packet (1 us after its last bit) every packet that started before that moment is
// already on the air. air_transmit checks it: a packet overlapping one a receiver already judged aborts the run.
#include "air.h"

#include <stdlib.h>
#include <string.h>

#include "nrf24.h"

#define RX_DECIDE_DELAY US(1)
#define KEEP_AFTER_END US(20000)  // longer than any ACK wait (ARD <= 4 ms): an ACK can still refer to its packet

void air_init(air_t* air, const faults_t* faults, FILE* trace) {
  memset(air, 0, sizeof *air);
  air->faults = *faults;
  rng_seed(&air->rng, faults->seed);
  air->trace = trace;
  air->next_id = 1;
}

void air_free(air_t* air) {
  free(air->packets);
  air->packets = NULL;
  air->count = air->capacity = 0;
}

void air_attach(air_t* air, struct nrf24* radio) { air->radios[air->radio_count++] = radio; }

// 7.3 packet format: preamble (1 byte), address (3-5), packet control field (9 bits), payload, CRC (0-2).
ticks_t packet_air_ticks(const packet_t* p) {
  uint64_t bits = 8 + 8 * (uint64_t)p->aw + 9 + 8 * (uint64_t)p->len + 8 * (uint64_t)p->crc_bytes;
  return bits * 1000 * TICKS_PER_US / p->rate_kbps;
}

int air_busy(const air_t* air, uint8_t channel, ticks_t start, ticks_t end) {
  for (int i = 0; i < air->count; ++i) {
    const packet_t* q = &air->packets[i];
    if (q->channel == channel && q->start < end && start < q->end) return 1;
  }
  return 0;
}

static int overlaps(const packet_t* a, const packet_t* b) {
  return a->channel == b->channel && a->start < b->end && b->start < a->end;
}

static int pick_fault(air_t* air, const packet_t* p) {
  // Two draws per packet whatever the outcome, so one fault setting does not shift the others' random stream.
  double u_loss = rng_unit(&air->rng), u_corrupt = rng_unit(&air->rng);
  int ack = p->kind == PKT_ACK;
  if (faults_scripted(&air->faults, ack ? p->peer : p->node, p->number, p->attempt, ack)) return FAULT_SCRIPTED;
  if (u_loss < (ack ? air->faults.ack_loss : air->faults.loss)) return FAULT_LOSS;
  if (u_corrupt < air->faults.corrupt) return FAULT_CORRUPT;
  return FAULT_NONE;
}

uint32_t air_transmit(air_t* air, const packet_t* p) {
  packet_t q = *p;
  q.id = air->next_id++;
  q.fault = pick_fault(air, &q);
  q.evaluated = q.acked = q.result_count = q.collided = 0;
  for (int i = 0; i < air->count; ++i) {
    if (!overlaps(&air->packets[i], &q)) continue;
    air->packets[i].collided = q.collided = 1;
    if (air->packets[i].evaluated) {
      fprintf(stderr, "radio-sim: packet %u from board %d starts inside packet %u, which a receiver already took: "
              "a radio event landed in a board's past\n", q.id, q.node, air->packets[i].id);
      abort();
    }
  }
  if (air->count == air->capacity) {
    air->capacity = air->capacity ? 2 * air->capacity : 64;
    air->packets = realloc(air->packets, sizeof *air->packets * (size_t)air->capacity);
    if (!air->packets) abort();
  }
  air->packets[air->count++] = q;
  for (int i = 0; i < air->radio_count; ++i) {
    nrf24_t* r = air->radios[i];
    if (r->node != q.node && nrf24_listening(r)) nrf24_schedule(r, q.end + RX_DECIDE_DELAY, EV_RX_END, q.id);
  }
  return q.id;
}

packet_t* air_find(air_t* air, uint32_t id) {
  for (int i = air->count - 1; i >= 0; --i) {
    if (air->packets[i].id == id) return &air->packets[i];
  }
  return NULL;
}

void air_result(packet_t* p, int node, const char* what) {
  if (p->result_count < AIR_MAX_RESULTS) {
    p->results[p->result_count].node = node;
    p->results[p->result_count].what = what;
    ++p->result_count;
  }
}

int packet_has_result(const packet_t* p, const char* what) {
  for (int i = 0; i < p->result_count; ++i) {
    if (!strcmp(p->results[i].what, what)) return 1;
  }
  return 0;
}

static void board_name(char* out, size_t size, int node) {
  if (node == 0) {
    snprintf(out, size, "base");
  } else if (node == ATTACKER_BOARD) {
    snprintf(out, size, "attacker");
  } else {
    snprintf(out, size, "node%d", node);
  }
}

static void trace_packet(air_t* air, const packet_t* p, int collided) {
  static const char* faults[] = {"null", "\"loss\"", "\"corrupt\"", "\"scripted\""};
  char from[16], to[16];
  board_name(from, sizeof from, p->node);
  fprintf(air->trace, "{\"t_us\":%.1f,\"end_us\":%.1f,\"from\":\"%s\",\"kind\":\"%s\",\"ch\":%u,\"kbps\":%u,"
          "\"addr\":\"", (double)p->start / TICKS_PER_US, (double)p->end / TICKS_PER_US, from,
          p->kind == PKT_DATA ? "data" : "ack", p->channel, p->rate_kbps);
  for (int i = p->aw - 1; i >= 0; --i) fprintf(air->trace, "%02x", p->addr[i]);
  fprintf(air->trace, "\",\"pid\":%u,\"pkt\":%u,\"attempt\":%d,\"len\":%u,\"payload\":\"", p->pid, p->number,
          p->attempt, p->len);
  for (int i = 0; i < p->len; ++i) fprintf(air->trace, "%02x", p->data[i]);
  fprintf(air->trace, "\",\"fault\":%s,\"collision\":%s,", faults[p->fault], collided ? "true" : "false");
  if (p->attack) fprintf(air->trace, "\"attack\":\"%s\",", p->attack == ATTACK_FORGE ? "forge" : "replay");
  fprintf(air->trace, "\"rx\":{");
  for (int i = 0; i < p->result_count; ++i) {
    board_name(to, sizeof to, p->results[i].node);
    fprintf(air->trace, "%s\"%s\":\"%s\"", i ? "," : "", to, p->results[i].what);
  }
  fprintf(air->trace, "}}\n");
}

static void finish(air_t* air, const packet_t* p) {
  int collided = p->collided;
  if (collided) ++air->stats.collisions;
  if (p->attack == ATTACK_FORGE && packet_has_result(p, "delivered")) ++air->stats.forged;
  if (p->attack == ATTACK_REPLAY && packet_has_result(p, "delivered")) ++air->stats.replayed;
  if (air->on_finish) air->on_finish(air->on_finish_ctx, p);
  if (p->kind == PKT_DATA && !packet_has_result(p, "delivered") && !packet_has_result(p, "dup_dropped")) {
    ++air->stats.lost;
  }
  if (p->kind == PKT_ACK && !p->acked) ++air->stats.acks_lost;
  if (air->trace) trace_packet(air, p, collided);
}

void air_prune(air_t* air, ticks_t before) {
  int n = 0;
  while (n < air->count && air->packets[n].end + KEEP_AFTER_END < before) {
    finish(air, &air->packets[n]);
    ++n;
  }
  if (!n) return;
  memmove(air->packets, air->packets + n, sizeof *air->packets * (size_t)(air->count - n));
  air->count -= n;
}

void air_trace_line(air_t* air, ticks_t t, int node, const char* line) {
  if (!air->trace) return;
  char who[16];
  board_name(who, sizeof who, node);
  fprintf(air->trace, "{\"t_us\":%.1f,\"board\":\"%s\",\"uart\":\"", (double)t / TICKS_PER_US, who);
  for (const char* c = line; *c; ++c) {
    if (*c == '"' || *c == '\\') {
      fprintf(air->trace, "\\%c", *c);
    } else if ((unsigned char)*c < 0x20) {
      fprintf(air->trace, "\\u%04x", (unsigned char)*c);
    } else {
      fputc(*c, air->trace);
    }
  }
  fprintf(air->trace, "\"}\n");
}
