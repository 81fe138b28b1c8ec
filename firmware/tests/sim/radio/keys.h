// The keys file (PROTOCOL.md 8.5), read for the sensor nodes the simulator provisions.
#pragma once

#include <stdint.h>

#define KEY_SIZE 16
#define KEYS_MAX_NODE 6

// Reads `path` into keys[n] / have[n] for the sources node1..node6 (other sources are skipped). Refuses a file
// the group or others may read, and a malformed one (naming the line, never its text). 0 on success; else -1 and
// the reason on stderr.
int keys_load(const char* path, uint8_t keys[KEYS_MAX_NODE + 1][KEY_SIZE], int have[KEYS_MAX_NODE + 1]);
