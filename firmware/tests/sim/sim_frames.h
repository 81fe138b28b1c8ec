// What the simulator tests share: v1 frames parsed strictly from a board's UART lines, and the values a sketch
// must report for injected input voltages, computed here independently of the firmware.
#pragma once

#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "telemetry/crc16_ccitt.h"

namespace sim {

struct Line {
  long ms;  // simulated time of the line's first byte
  std::string text;
};

struct Frame {
  long ms;
  std::string source;
  long seq;
  std::vector<std::pair<std::string, double>> values;
};

// Parses a v1 line strictly (PROTOCOL.md section 1), checking its CRC; fails the test on anything else.
inline bool parse_frame(const Line& line, Frame& frame) {
  static const std::regex v1(R"(^\$(T1,([A-Za-z0-9_-]{1,32}),(0|[1-9][0-9]{0,4}),(.+))\*([0-9A-F]{4})$)");
  std::smatch m;
  if (!std::regex_match(line.text, m, v1)) return false;
  std::string body = m[1];
  unsigned crc = std::stoul(m[5], nullptr, 16);
  EXPECT_EQ(telemetry::crc16_ccitt(body.data(), body.size()), crc) << line.text;
  frame.ms = line.ms;
  frame.source = m[2];
  frame.seq = std::stol(m[3]);
  std::stringstream pairs(m[4]);
  static const std::regex pair(R"(^([a-z][a-z0-9_]{0,15})=([+-]?[0-9]+(\.[0-9]+)?)$)");
  for (std::string item; std::getline(pairs, item, ',');) {
    std::smatch p;
    if (!std::regex_match(item, p, pair)) return false;
    frame.values.push_back({p[1], std::stod(p[2])});
  }
  return true;
}

const double kVcc = 5000;

// A 10 kΩ B=3950 NTC to ground under a 10 kΩ resistor, at ADC count `count`.
inline double ntc_celsius_at(double count) {
  double ohm = 10000.0 * count / (1023.0 - count);
  return 1.0 / (1.0 / 298.15 + std::log(ohm / 10000.0) / 3950.0) - 273.15;
}

// The ADC count of `mv` is known only to about a count (rounding of the converter model), so the expected
// temperature is a band rather than a point.
inline void expect_temperature(double celsius, double mv, double vcc = kVcc) {
  double count = mv * 1023.0 / vcc;
  double hot = ntc_celsius_at(count - 1.5), cold = ntc_celsius_at(count + 1.5);
  EXPECT_GE(celsius, cold) << "injected " << mv << " mV";
  EXPECT_LE(celsius, hot) << "injected " << mv << " mV";
}

inline void expect_light(double light, double mv, double vcc = kVcc) {
  EXPECT_NEAR(light, mv * 100.0 / vcc, 1.0) << "injected " << mv;
}

inline double value_of(const Frame& f, const std::string& key) {
  for (const auto& kv : f.values) {
    if (kv.first == key) return kv.second;
  }
  ADD_FAILURE() << "frame has no " << key;
  return NAN;
}

}  // namespace sim
