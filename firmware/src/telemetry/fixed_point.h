// Fixed-point numbers: how the boards hold readings without printf("%f") (which avr-libc leaves out by default).
#pragma once

#include <stdint.h>

namespace telemetry {

// value = scaled / 10^decimals, e.g. {1177, 2} is 11.77 and {-250, 2} is -2.50.
struct Fixed {
  int32_t scaled;
  uint8_t decimals;
};

const uint8_t kFixedMaxDecimals = 9;

// Rounds half away from zero; saturates at the int32 range.
Fixed fixed_from_float(float value, uint8_t decimals);

}  // namespace telemetry
