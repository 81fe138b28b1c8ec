// Simulated time shared by every board and the air: ticks of the boards' 16 MHz clock since the run began.
#pragma once

#include <stdint.h>

typedef uint64_t ticks_t;

#define TICKS_PER_US 16ULL
#define TICKS_PER_MS (1000ULL * TICKS_PER_US)
#define US(x) ((ticks_t)(x) * TICKS_PER_US)
