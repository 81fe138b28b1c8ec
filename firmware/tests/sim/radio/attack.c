#define _POSIX_C_SOURCE 200809L
#include "attack.h"

#include <string.h>

#include "../../../src/telemetry/hmac_sha256.h"

// Payload version 2 fields the forger rewrites (PROTOCOL.md 8.2); version 1 has no counter and no tag.
#define V2_SEQ 2
#define V2_COUNTER 4
#define V2_FIRST_VALUE 12
#define V2_HEADER 11
#define V2_TAG 6
#define V1_FIRST_VALUE 9
#define V1_HEADER 8
#define FORGED_VALUE 2000  // 20.00 degC where a frost night was: what an attacker would want stored
#define RADIO_LEAD US(1000)  // an attack packet starts this far ahead: every board is behind that still
#define QUIET_BEFORE US(300)  // the channel must have been free that long (an ACK may be about to follow)
#define QUIET_AFTER US(2000)  // and be free that long after (a genuine retransmission collides only by chance)

int attack_parse(attack_t* a, const char* kinds) {
  char copy[64];
  if (strlen(kinds) >= sizeof copy) return -1;
  strcpy(copy, kinds);
  for (char* save = NULL, *kind = strtok_r(copy, ",", &save); kind; kind = strtok_r(NULL, ",", &save)) {
    if (!strcmp(kind, "forge")) {
      a->forge = 1;
    } else if (!strcmp(kind, "replay")) {
      a->replay = 1;
    } else {
      return -1;
    }
  }
  return a->forge || a->replay ? 0 : -1;
}

static ticks_t next_gap(attack_t* a) { return (ticks_t)((0.5 + rng_unit(&a->rng)) * (double)a->period); }

static attack_record_t* record_at(attack_t* a, int i) {  // i = 0 is the oldest
  return &a->recorded[(a->recorded_head + i) % ATTACK_MAX_RECORDED];
}

static int payload_node(const packet_t* p) { return p->len > 1 ? p->data[1] : 0; }

// Genuine data packets a radio took are what an attacker that heard the ACK knows to be worth playing back.
static void hear(void* ctx, const packet_t* p) {
  attack_t* a = ctx;
  if (p->kind != PKT_DATA || p->attack || !packet_has_result(p, "delivered")) return;
  attack_record_t* r;
  if (a->recorded_count < ATTACK_MAX_RECORDED) {
    r = record_at(a, a->recorded_count++);
  } else {
    r = record_at(a, 0);
    a->recorded_head = (a->recorded_head + 1) % ATTACK_MAX_RECORDED;
  }
  r->packet = *p;
  r->heard = p->end;
}

void attack_start(attack_t* a, air_t* air, int nodes, uint64_t seed, ticks_t period) {
  a->nodes = nodes;
  a->period = period;
  rng_seed(&a->rng, seed ^ 0xA77AC4);
  a->next[0] = a->next[1] = period;
  air->on_finish = hear;
  air->on_finish_ctx = a;
}

void attack_quiet(attack_t* a, ticks_t from, ticks_t until) {
  if (a->quiet_count == ATTACK_MAX_QUIET) return;
  a->quiet[a->quiet_count].from = from;
  a->quiet[a->quiet_count].until = until;
  ++a->quiet_count;
}

void attack_node_rebooted(attack_t* a, int node, ticks_t t) {
  a->replay_soon = t + US(500000);
  a->replay_soon_node = node;
}

// The newest record of `node` heard before `before`, or NULL.
static const attack_record_t* newest_of(attack_t* a, int node, ticks_t before) {
  for (int i = a->recorded_count - 1; i >= 0; --i) {
    const attack_record_t* r = record_at(a, i);
    if (payload_node(&r->packet) == node && r->heard < before) return r;
  }
  return NULL;
}

static void put_le(uint8_t* p, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// A node's latest payload with a warmer reading, a later seq and counter, re-tagged with a key that is not that
// node's: a random one, or another node's real key when the keys are known.
static int forge(attack_t* a, packet_t* p) {
  int node = 1 + (int)(rng_unit(&a->rng) * a->nodes);
  const attack_record_t* r = newest_of(a, node, (ticks_t)-1);
  if (!r) return 0;
  *p = r->packet;
  uint8_t* d = p->data;
  if (d[0] == 2 && p->len >= V2_HEADER + V2_TAG) {
    put_le(d + V2_SEQ, get_le(d + V2_SEQ, 2) + 1, 2);
    put_le(d + V2_COUNTER, get_le(d + V2_COUNTER, 4) + 1000, 4);
    if (p->len > V2_HEADER + V2_TAG) put_le(d + V2_FIRST_VALUE, FORGED_VALUE, 2);
    uint8_t key[16], mac[SHA256_DIGEST_SIZE];
    int other = 1 + (int)(rng_unit(&a->rng) * a->nodes);
    if (other != node && a->have_key[other] && rng_unit(&a->rng) < 0.5) {
      memcpy(key, a->keys[other], sizeof key);
    } else {
      for (size_t i = 0; i < sizeof key; ++i) key[i] = (uint8_t)(rng_unit(&a->rng) * 256);
    }
    hmac_sha256(key, sizeof key, d, (size_t)(p->len - V2_TAG), mac);
    memcpy(d + p->len - V2_TAG, mac, V2_TAG);
  } else if (p->len > V1_HEADER) {
    put_le(d + V1_FIRST_VALUE, FORGED_VALUE, 2);  // version 1: nothing to sign, nothing to stop it
  }
  p->attack = ATTACK_FORGE;
  return 1;
}

// A recorded payload, byte for byte: one of a just-rebooted node's from before its reboot, else a random one
// that its node has since followed with a newer one (so it is old news at the gateway too).
static int replay(attack_t* a, packet_t* p, ticks_t now) {
  const attack_record_t* r = NULL;
  if (a->replay_soon && now >= a->replay_soon) {
    r = newest_of(a, a->replay_soon_node, a->replay_soon - US(500000));
    a->replay_soon = 0;
  }
  for (int tries = 0; !r && tries < 8 && a->recorded_count; ++tries) {
    const attack_record_t* pick = record_at(a, (int)(rng_unit(&a->rng) * a->recorded_count));
    const attack_record_t* newest = newest_of(a, payload_node(&pick->packet), (ticks_t)-1);
    if (newest != pick) r = pick;
  }
  if (!r) return 0;
  *p = r->packet;
  p->attack = ATTACK_REPLAY;
  return 1;
}

static int quiet(const attack_t* a, ticks_t t) {
  for (int i = 0; i < a->quiet_count; ++i) {
    if (t >= a->quiet[i].from && t < a->quiet[i].until) return 1;
  }
  return 0;
}

void attack_tick(attack_t* a, air_t* air, ticks_t now) {
  ticks_t start = now + RADIO_LEAD;
  if (!a->recorded_count || quiet(a, start)) return;
  for (int kind = 0; kind < 2; ++kind) {
    int due = kind == 0 ? a->forge && start >= a->next[0]
                        : a->replay && (start >= a->next[1] || (a->replay_soon && start >= a->replay_soon));
    if (!due) continue;
    packet_t p;
    const packet_t* heard = &record_at(a, a->recorded_count - 1)->packet;  // the channel it learnt
    ticks_t end = start + packet_air_ticks(heard);
    if (air_busy(air, heard->channel, start - QUIET_BEFORE, end + QUIET_AFTER)) return;  // next ms
    if (!(kind == 0 ? forge(a, &p) : replay(a, &p, start))) {
      a->next[kind] = start + next_gap(a);
      continue;
    }
    p.node = ATTACKER_BOARD;
    p.pid = (uint8_t)((p.pid + 1 + (int)(rng_unit(&a->rng) * 3)) & 3);  // never the PID it was recorded with
    p.no_ack = 1;
    p.number = (uint32_t)(a->sent++);
    p.attempt = 0;
    p.start = start;
    p.end = start + packet_air_ticks(&p);
    air_transmit(air, &p);
    a->next[kind] = start + next_gap(a);
    return;  // one packet per tick: the next waits for a quiet channel again
  }
}
