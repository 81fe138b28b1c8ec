#include "metric_ids.h"

#include "fixed_point.h"

namespace telemetry {
namespace {

const MetricInfo kMetrics[] = {
    {kMetricTempIn, "temp_in", 2},   {kMetricTempOut, "temp_out", 2}, {kMetricTempCheck, "temp_check", 2},
    {kMetricHumidity, "humidity", 1}, {kMetricLight, "light", 0},     {kMetricTemp, "temp", 2},
};

}  // namespace

const MetricInfo* metric_info(uint8_t id) {
  for (const MetricInfo& m : kMetrics) {
    if (m.id == id) return &m;
  }
  return 0;
}

bool metric_scaled(uint8_t id, float value, int16_t& scaled) {
  const MetricInfo* info = metric_info(id);
  if (info == 0) return false;
  Fixed f = fixed_from_float(value, info->decimals);
  if (f.scaled < INT16_MIN || f.scaled > INT16_MAX) return false;
  scaled = static_cast<int16_t>(f.scaled);
  return true;
}

}  // namespace telemetry
