// Seeded faults of the air: random loss of data packets and of ACKs, corruption (caught by the receiver's CRC),
// and scripted drops of one node's packet by number (`NODE:PKT[:N|all]`).
#pragma once

#include <stdint.h>

#define MAX_SCRIPTED_DROPS 32

typedef struct {
  int node;          // 1..6
  uint32_t packet;   // the node's packet number: 0 for its first payload, +1 per payload it loads
  int attempts;      // drop the first `attempts` transmissions of it (its ACKs for drop-ack); -1 = all
  int ack;           // 0: drop the data packet, 1: drop its ACK
} scripted_drop_t;

typedef struct {
  uint64_t seed;
  double loss, ack_loss, corrupt;  // probabilities 0..1
  scripted_drop_t drops[MAX_SCRIPTED_DROPS];
  int drop_count;
} faults_t;

// Parses NODE:PKT[:N|all] into f (ack: 0 for --drop-data, 1 for --drop-ack); 0 on success.
int faults_add_drop(faults_t* f, const char* spec, int ack);

// Whether the scripted rules drop transmission `attempt` (0 = first) of `packet` of `node` (or its ACK).
int faults_scripted(const faults_t* f, int node, uint32_t packet, int attempt, int ack);

// xorshift64*: a small, seedable generator; identical seeds give identical runs.
typedef struct {
  uint64_t state;
} rng_t;

void rng_seed(rng_t* r, uint64_t seed);
double rng_unit(rng_t* r);  // uniform in [0, 1)
