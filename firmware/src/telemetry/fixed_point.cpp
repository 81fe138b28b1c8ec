#include "fixed_point.h"

namespace telemetry {

Fixed fixed_from_float(float value, uint8_t decimals) {
  float scaled = value;
  for (uint8_t i = 0; i < decimals; ++i) scaled *= 10.0f;
  scaled += (scaled < 0) ? -0.5f : 0.5f;
  Fixed out;
  out.decimals = decimals;
  if (scaled >= 2147483647.0f) out.scaled = INT32_MAX;
  else if (scaled <= -2147483648.0f) out.scaled = INT32_MIN;
  else out.scaled = static_cast<int32_t>(scaled);  // truncation toward zero completes the rounding
  return out;
}

}  // namespace telemetry
