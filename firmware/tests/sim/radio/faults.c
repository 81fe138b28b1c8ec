#include "faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int faults_add_drop(faults_t* f, const char* spec, int ack) {
  if (f->drop_count >= MAX_SCRIPTED_DROPS) return -1;
  scripted_drop_t d = {.ack = ack, .attempts = 1};
  char tail[8] = "";
  int node;
  unsigned long packet;
  int fields = sscanf(spec, "%d:%lu:%7s", &node, &packet, tail);
  if (fields < 2 || node < 1 || node > 6) return -1;
  if (fields == 3) {
    char* end;
    long n = strtol(tail, &end, 10);
    if (!strcmp(tail, "all")) {
      d.attempts = -1;
    } else if (*end || n < 1) {
      return -1;
    } else {
      d.attempts = (int)n;
    }
  }
  d.node = node;
  d.packet = (uint32_t)packet;
  f->drops[f->drop_count++] = d;
  return 0;
}

int faults_scripted(const faults_t* f, int node, uint32_t packet, int attempt, int ack) {
  for (int i = 0; i < f->drop_count; ++i) {
    const scripted_drop_t* d = &f->drops[i];
    if (d->ack == ack && d->node == node && d->packet == packet && (d->attempts < 0 || attempt < d->attempts)) {
      return 1;
    }
  }
  return 0;
}

void rng_seed(rng_t* r, uint64_t seed) { r->state = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL; }

double rng_unit(rng_t* r) {
  uint64_t x = r->state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->state = x;
  return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}
