// Metric ids carried in the radio payload, their v1 frame names and fixed-point scale (PROTOCOL.md section 6).
#pragma once

#include <stdint.h>

namespace telemetry {

enum MetricId : uint8_t {
  kMetricTempIn = 1,     // temp_in, °C x 100
  kMetricTempOut = 2,    // temp_out, °C x 100
  kMetricTempCheck = 3,  // temp_check, °C x 100
  kMetricHumidity = 4,   // humidity, %RH x 10
  kMetricLight = 5,      // light, 0-100 x 1
  kMetricTemp = 6,       // temp, °C x 100
};

struct MetricInfo {
  uint8_t id;
  const char* name;
  uint8_t decimals;  // the payload carries value x 10^decimals as int16
};

// The v1 frame name and scale of a metric id, or null for an id this firmware does not know.
const MetricInfo* metric_info(uint8_t id);

// value x 10^decimals of the id, rounded; false for an unknown id or a value outside int16 once scaled.
bool metric_scaled(uint8_t id, float value, int16_t& scaled);

}  // namespace telemetry
