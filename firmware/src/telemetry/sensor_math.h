// Sensor math for the boards' analog inputs: pure functions of ADC counts, so they run in host tests.
// Functions that can fail return false for a reading that cannot be real (open or shorted sensor), so the
// caller leaves the metric out instead of sending a bogus number.
#pragma once

#include <stdint.h>

namespace telemetry {

const uint16_t kAdcMax = 1023;  // 10-bit ADC full scale

// A resistive sensor in a voltage divider with a fixed resistor, read ratiometrically.
struct Divider {
  float series_ohm;            // the fixed resistor
  bool sensor_to_ground;       // true: Vcc - series - ADC pin - sensor - GND; false: sensor on the Vcc side
};

// NTC thermistor, B-parameter model: 1/T = 1/T0 + ln(R/R0)/B.
struct NtcBeta {
  float nominal_ohm;      // R0, e.g. 10000
  float nominal_celsius;  // T0, e.g. 25
  float beta;             // B, e.g. 3950
};

// NTC thermistor, Steinhart-Hart model: 1/T = a + b ln R + c (ln R)^3, T in kelvin.
struct NtcSteinhartHart {
  float a, b, c;
};

// The parts in firmware/README.md's bill of materials: 10 kΩ B=3950 NTC, 10 kΩ divider resistors.
const Divider kDivider10kToGround = {10000.0f, true};
const NtcBeta kNtc10k3950 = {10000.0f, 25.0f, 3950.0f};

// Sensor resistance; false at the rails (0 or full scale: open or shorted divider).
bool divider_sensor_ohm(uint16_t adc, const Divider& divider, float& ohm);

float ntc_celsius_from_ohm(float ohm, const NtcBeta& ntc);
float ntc_celsius_from_ohm(float ohm, const NtcSteinhartHart& ntc);

// Thermistor temperature; false when the divider is at a rail or the result is outside -55..125 °C.
bool ntc_celsius(uint16_t adc, const Divider& divider, const NtcBeta& ntc, float& celsius);
bool ntc_celsius(uint16_t adc, const Divider& divider, const NtcSteinhartHart& ntc, float& celsius);

// Photoresistor divider reading 0-1023 -> light 0-100 (rounded). brighter_is_higher says which way it is wired.
uint8_t light_percent(uint16_t adc, bool brighter_is_higher);

// Supply voltage from the internal ~1.1 V bandgap measured against AVcc: Vcc = 1.1 V * 1023 / adc.
// bandgap_mv calibrates a board (the bandgap varies 1.0-1.2 V). Returns 0 for adc 0 (no reading).
uint16_t supply_millivolts(uint16_t bandgap_adc, uint16_t bandgap_mv = 1100);

// Ratiometric analog humidity sensor (Honeywell HIH-4030/5030 family): Vout/Vs = 0.0062 RH + 0.16, corrected
// for temperature. false when the reading is outside -5..105 %RH (disconnected or broken); clamps to 0..100.
bool humidity_percent(uint16_t adc, float celsius, float& rh);

}  // namespace telemetry
