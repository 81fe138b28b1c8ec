#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "telemetry/crc16_ccitt.h"
#include "telemetry/frame_encoder.h"
#include "vectors.h"

using telemetry::Fixed;
using telemetry::Metric;

namespace {

// Vector value text ("-2.50", "88") -> the fixed-point form the firmware holds ({-250, 2}, {88, 0}).
Fixed fixed_from_text(const std::string& text) {
  size_t point = text.find('.');
  std::string digits = point == std::string::npos ? text : text.substr(0, point) + text.substr(point + 1);
  Fixed f;
  f.decimals = point == std::string::npos ? 0 : static_cast<uint8_t>(text.size() - point - 1);
  f.scaled = static_cast<int32_t>(std::stol(digits));
  return f;
}

std::string encode(const char* source, uint16_t seq, const std::vector<Metric>& metrics, size_t capacity = 256) {
  std::vector<char> out(capacity + 1, 'X');
  size_t n = telemetry::encode_frame(out.data(), capacity, source, seq, metrics.data(),
                                     static_cast<uint8_t>(metrics.size()));
  EXPECT_EQ(n, std::string(out.data()).size());
  return std::string(out.data());
}

}  // namespace

TEST(Crc16, MatchesVectors) {
  auto cases = load_vectors("crc.json");
  ASSERT_GE(cases.size(), 4u);
  for (const auto& c : cases) {
    std::string input = c.at("input");
    char hex[5];
    snprintf(hex, sizeof hex, "%04X", telemetry::crc16_ccitt(input.data(), input.size()));
    EXPECT_EQ(std::string(hex), c.at("crc").get<std::string>()) << "input: " << input;
  }
}

TEST(FrameEncoder, ReproducesEncodeVectorsByteForByte) {
  auto cases = load_vectors("encode.json");
  ASSERT_GE(cases.size(), 6u);
  for (const auto& c : cases) {
    std::vector<std::string> keys;
    std::vector<Metric> metrics;
    for (const auto& pair : c.at("values")) keys.push_back(pair.at(0).get<std::string>());
    size_t i = 0;
    for (const auto& pair : c.at("values")) metrics.push_back({keys[i++].c_str(), fixed_from_text(pair.at(1))});
    std::string source = c.at("source");
    uint16_t seq = c.at("seq");
    char out[telemetry::kFrameBufferSize];
    size_t n = c.at("t").is_null()
                   ? telemetry::encode_frame(out, sizeof out, source.c_str(), seq, metrics.data(),
                                             static_cast<uint8_t>(metrics.size()))
                   : telemetry::encode_frame_with_time(out, sizeof out, source.c_str(), seq, c.at("t").get<uint64_t>(),
                                                       metrics.data(), static_cast<uint8_t>(metrics.size()));
    std::string expected = c.at("line");
    EXPECT_EQ(std::string(out, n), expected) << c.at("name");
  }
}

TEST(FrameEncoder, FormatsFixedPointEdgeCases) {
  std::string line = encode("G", 1, {{"a", {-5, 1}}, {"b", {7, 3}}, {"c", {0, 2}}, {"d", {INT32_MIN, 0}}});
  EXPECT_EQ(line.substr(0, line.find('*')), "$T1,G,1,a=-0.5,b=0.007,c=0.00,d=-2147483648");
}

TEST(FrameEncoder, WritesSmallTimesWithoutPadding) {
  Metric m = {"x", {1, 0}};
  char out[telemetry::kFrameBufferSize];
  ASSERT_GT(telemetry::encode_frame_with_time(out, sizeof out, "G", 0, 0, &m, 1), 0u);
  EXPECT_EQ(std::string(out).substr(0, 13), "$T1,G,0,t=0,x");
  ASSERT_GT(telemetry::encode_frame_with_time(out, sizeof out, "G", 0, 10000000, &m, 1), 0u);
  EXPECT_EQ(std::string(out).substr(0, 20), "$T1,G,0,t=10000000,x");
  EXPECT_EQ(telemetry::encode_frame_with_time(out, sizeof out, "G", 0, 1000000000000000ULL, &m, 1), 0u);
}

TEST(FrameEncoder, RefusesInputsThatBreakV1Rules) {
  Metric ok = {"temp", {1, 0}};
  char out[telemetry::kFrameBufferSize];
  auto encode_one = [&](const char* source, Metric m) { return telemetry::encode_frame(out, sizeof out, source, 1, &m, 1); };
  EXPECT_GT(encode_one("room", ok), 0u);
  EXPECT_EQ(encode_one("", ok), 0u);
  EXPECT_EQ(encode_one("bad source", ok), 0u);
  EXPECT_EQ(encode_one("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", ok), 0u);  // 33 characters
  EXPECT_EQ(encode_one("room", {"Temp", {1, 0}}), 0u);
  EXPECT_EQ(encode_one("room", {"t", {1, 0}}), 0u);                   // reserved
  EXPECT_EQ(encode_one("room", {"abcdefghijklmnopq", {1, 0}}), 0u);   // 17 characters
  EXPECT_EQ(encode_one("room", {"temp", {1, 10}}), 0u);               // too many decimals
  EXPECT_EQ(telemetry::encode_frame(out, sizeof out, "room", 1, &ok, 0), 0u);
  Metric twice[] = {ok, ok};
  EXPECT_EQ(telemetry::encode_frame(out, sizeof out, "room", 1, twice, 2), 0u);
  EXPECT_STREQ(out, "");
}

TEST(FrameEncoder, NeverWritesPastCapacityOr200Bytes) {
  std::vector<std::string> keys;
  std::vector<Metric> metrics;
  for (int i = 0; i < 20; ++i) keys.push_back("metric_" + std::to_string(i));
  for (const auto& k : keys) metrics.push_back({k.c_str(), {123456, 3}});
  char big[512];
  EXPECT_EQ(telemetry::encode_frame(big, sizeof big, "G", 1, metrics.data(), 20), 0u);  // > 200 bytes
  char small[16];
  memset(small, 'X', sizeof small);
  EXPECT_EQ(telemetry::encode_frame(small, 10, "G", 1, metrics.data(), 1), 0u);
  EXPECT_EQ(small[10], 'X');
  // 7 ("$T1,S,1") + 6 x 28 (",<16-char key>=1.00000000") + 20 (",lastkey=0.000000000") + 5 ("*CRC") = 200.
  std::vector<std::string> long_keys;
  for (int i = 0; i < 6; ++i) long_keys.push_back("key_of_16_chars" + std::to_string(i));
  std::vector<Metric> fill;
  for (const auto& k : long_keys) fill.push_back({k.c_str(), {100000000, 8}});
  fill.push_back({"lastkey", {0, 9}});
  char out[telemetry::kFrameBufferSize];
  EXPECT_EQ(telemetry::encode_frame(out, sizeof out, "S", 1, fill.data(), 7), 201u);  // 200 + '\n'
  fill.back().key = "lastkey8";
  EXPECT_EQ(telemetry::encode_frame(out, sizeof out, "S", 1, fill.data(), 7), 0u);
}
