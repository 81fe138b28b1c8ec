// An attacker on the air: one more nRF24 transmitter, no board behind it. It listens first (it learns the channel,
// data rate and address layout from the genuine packets it hears) and then, at seeded moments, either forges
// payloads for real node ids (signed with a wrong key) or plays back genuine payloads it recorded. It sends without
// asking for an ACK, so it never takes a node's ACK away, and only into a quiet channel.
#pragma once

#include <stdint.h>

#include "air.h"
#include "faults.h"

#define ATTACK_MAX_RECORDED 512
#define ATTACK_MAX_QUIET 8

typedef struct {
  packet_t packet;  // as it was on the air
  ticks_t heard;    // when its receivers were done with it
} attack_record_t;

typedef struct {
  int forge, replay;           // which attacks run
  int nodes;                   // real node ids are 1..nodes
  uint8_t keys[7][16];         // the nodes' real keys, when known (forging with another node's key)
  int have_key[7];
  ticks_t period;              // mean time between two packets of one attack
  ticks_t next[2];             // next forge, next replay
  rng_t rng;
  attack_record_t recorded[ATTACK_MAX_RECORDED];  // genuine payloads a radio took, oldest first (a ring)
  int recorded_count, recorded_head;
  struct {
    ticks_t from, until;       // no attack packet starts in [from, until): a base station reboot
  } quiet[ATTACK_MAX_QUIET];
  int quiet_count;
  uint64_t sent;
  ticks_t replay_soon;         // a node rebooted: replay one of its old payloads from then on (0: none pending)
  int replay_soon_node;
} attack_t;

// Parses "forge", "replay" or "forge,replay" into a; 0 on success.
int attack_parse(attack_t* a, const char* kinds);
// Starts the attacker (after attack_parse): it records what `air` carries from now on.
void attack_start(attack_t* a, air_t* air, int nodes, uint64_t seed, ticks_t period);
void attack_quiet(attack_t* a, ticks_t from, ticks_t until);  // stays silent then
void attack_node_rebooted(attack_t* a, int node, ticks_t t);   // replays one of its pre-reboot payloads next
// Called as simulated time passes (once per ms): sends what is due, into a quiet channel from `now` + 1 ms on.
void attack_tick(attack_t* a, air_t* air, ticks_t now);
