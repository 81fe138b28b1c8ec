#include "sensor_math.h"

#include <math.h>

namespace telemetry {
namespace {

const float kKelvinOffset = 273.15f;
const float kNtcMinCelsius = -55.0f;
const float kNtcMaxCelsius = 125.0f;

bool plausible_celsius(float c) { return c >= kNtcMinCelsius && c <= kNtcMaxCelsius; }

}  // namespace

bool divider_sensor_ohm(uint16_t adc, const Divider& divider, float& ohm) {
  if (adc == 0 || adc >= kAdcMax) return false;
  float low = adc, high = static_cast<float>(kAdcMax - adc);
  ohm = divider.sensor_to_ground ? divider.series_ohm * low / high : divider.series_ohm * high / low;
  return true;
}

float ntc_celsius_from_ohm(float ohm, const NtcBeta& ntc) {
  float inverse_kelvin = 1.0f / (ntc.nominal_celsius + kKelvinOffset) + logf(ohm / ntc.nominal_ohm) / ntc.beta;
  return 1.0f / inverse_kelvin - kKelvinOffset;
}

float ntc_celsius_from_ohm(float ohm, const NtcSteinhartHart& ntc) {
  float ln_r = logf(ohm);
  return 1.0f / (ntc.a + ntc.b * ln_r + ntc.c * ln_r * ln_r * ln_r) - kKelvinOffset;
}

bool ntc_celsius(uint16_t adc, const Divider& divider, const NtcBeta& ntc, float& celsius) {
  float ohm;
  if (!divider_sensor_ohm(adc, divider, ohm)) return false;
  celsius = ntc_celsius_from_ohm(ohm, ntc);
  return plausible_celsius(celsius);
}

bool ntc_celsius(uint16_t adc, const Divider& divider, const NtcSteinhartHart& ntc, float& celsius) {
  float ohm;
  if (!divider_sensor_ohm(adc, divider, ohm)) return false;
  celsius = ntc_celsius_from_ohm(ohm, ntc);
  return plausible_celsius(celsius);
}

uint8_t light_percent(uint16_t adc, bool brighter_is_higher) {
  if (adc > kAdcMax) adc = kAdcMax;
  uint16_t level = brighter_is_higher ? adc : static_cast<uint16_t>(kAdcMax - adc);
  return static_cast<uint8_t>((static_cast<uint32_t>(level) * 100 + kAdcMax / 2) / kAdcMax);
}

uint16_t supply_millivolts(uint16_t bandgap_adc, uint16_t bandgap_mv) {
  if (bandgap_adc == 0) return 0;
  uint32_t mv = (static_cast<uint32_t>(bandgap_mv) * kAdcMax + bandgap_adc / 2) / bandgap_adc;
  return mv > 65535 ? 65535 : static_cast<uint16_t>(mv);
}

bool humidity_percent(uint16_t adc, float celsius, float& rh) {
  float sensor_rh = (static_cast<float>(adc) / kAdcMax - 0.16f) / 0.0062f;
  float true_rh = sensor_rh / (1.0546f - 0.00216f * celsius);
  if (true_rh < -5.0f || true_rh > 105.0f) return false;
  rh = true_rh < 0.0f ? 0.0f : (true_rh > 100.0f ? 100.0f : true_rh);
  return true;
}

}  // namespace telemetry
