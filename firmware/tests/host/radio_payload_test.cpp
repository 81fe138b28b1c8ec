#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "telemetry/metric_ids.h"
#include "telemetry/payload_to_frame.h"
#include "telemetry/radio_payload.h"
#include "vectors.h"

using namespace telemetry;

namespace {

RadioPayload node3_payload() {
  RadioPayload p = {};
  p.node_id = 3;
  p.seq = 65535;
  p.vbat_mv = 3291;
  p.send_failures = 2;
  EXPECT_TRUE(payload_add(p, kMetricTempIn, -250));
  EXPECT_TRUE(payload_add(p, kMetricHumidity, 812));
  EXPECT_TRUE(payload_add(p, kMetricLight, 0));
  return p;
}

std::vector<uint8_t> encoded(const RadioPayload& p) {
  std::vector<uint8_t> bytes(kPayloadMaxSize);
  bytes.resize(payload_encode(p, bytes.data()));
  return bytes;
}

PayloadError decode(const std::vector<uint8_t>& bytes) {
  RadioPayload out;
  return payload_decode(bytes.data(), static_cast<uint8_t>(bytes.size()), out);
}

}  // namespace

TEST(RadioPayload, LayoutIsTheDocumentedLittleEndianRecord) {
  std::vector<uint8_t> expected = {1, 3, 0xFF, 0xFF, 0xDB, 0x0C, 2, 3,   // version, node, seq, vbat, failures, count
                                   1, 0x06, 0xFF, 4, 0x2C, 0x03, 5, 0, 0};  // temp_in -250, humidity 812, light 0
  EXPECT_EQ(encoded(node3_payload()), expected);
}

TEST(RadioPayload, RoundTrips) {
  RadioPayload p = node3_payload();
  std::vector<uint8_t> bytes = encoded(p);
  RadioPayload back;
  ASSERT_EQ(payload_decode(bytes.data(), static_cast<uint8_t>(bytes.size()), back), kPayloadOk);
  EXPECT_EQ(back.node_id, 3);
  EXPECT_EQ(back.seq, 65535);
  EXPECT_EQ(back.vbat_mv, 3291);
  EXPECT_EQ(back.send_failures, 2);
  ASSERT_EQ(back.count, 3);
  EXPECT_EQ(back.metrics[0].id, kMetricTempIn);
  EXPECT_EQ(back.metrics[0].scaled, -250);
  EXPECT_EQ(back.metrics[1].scaled, 812);
  EXPECT_EQ(back.metrics[2].id, kMetricLight);
}

TEST(RadioPayload, FullPayloadIsOneNrf24Packet) {
  RadioPayload p = {};
  p.node_id = 6;
  for (uint8_t id = 1; id <= kPayloadMaxMetrics; ++id) ASSERT_TRUE(payload_add(p, id, static_cast<int16_t>(-id)));
  EXPECT_FALSE(payload_add(p, 100, 1));  // full
  std::vector<uint8_t> bytes = encoded(p);
  EXPECT_EQ(bytes.size(), 32u);
  EXPECT_EQ(decode(bytes), kPayloadOk);
}

TEST(RadioPayload, RejectsMalformedPayloads) {
  std::vector<uint8_t> good = encoded(node3_payload());
  auto with = [&](size_t index, uint8_t value) {
    std::vector<uint8_t> b = good;
    b[index] = value;
    return b;
  };
  EXPECT_EQ(decode(good), kPayloadOk);
  EXPECT_EQ(decode({}), kPayloadTooShort);
  EXPECT_EQ(decode(std::vector<uint8_t>(good.begin(), good.begin() + 7)), kPayloadTooShort);
  EXPECT_EQ(decode(with(0, 2)), kPayloadBadVersion);
  EXPECT_EQ(decode(with(1, 0)), kPayloadBadNode);
  EXPECT_EQ(decode(with(1, 255)), kPayloadBadNode);
  EXPECT_EQ(decode(with(7, 4)), kPayloadBadLength);   // count says 4, bytes hold 3
  EXPECT_EQ(decode(with(7, 9)), kPayloadBadLength);   // more than fits
  EXPECT_EQ(decode(std::vector<uint8_t>(good.begin(), good.end() - 1)), kPayloadBadLength);  // truncated
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(decode(longer), kPayloadBadLength);
  EXPECT_EQ(decode(with(8, 0)), kPayloadBadMetricId);
  EXPECT_EQ(decode(with(11, kMetricTempIn)), kPayloadDuplicateId);
}

TEST(RadioPayload, EncoderRefusesWhatTheDecoderWouldReject) {
  RadioPayload p = node3_payload();
  uint8_t bytes[kPayloadMaxSize];
  p.node_id = 0;
  EXPECT_EQ(payload_encode(p, bytes), 0);
  p = node3_payload();
  EXPECT_FALSE(payload_add(p, kMetricTempIn, 1));  // duplicate
  EXPECT_FALSE(payload_add(p, 0, 1));
  p.metrics[1].id = kMetricTempIn;  // forced duplicate
  EXPECT_EQ(payload_encode(p, bytes), 0);
}

TEST(PayloadToFrame, MatchesTheBaseStationVector) {
  std::string expected;
  for (const auto& c : load_vectors("encode.json")) {
    if (c.at("name") == "base station frame for node 3") expected = c.at("line");
  }
  ASSERT_FALSE(expected.empty());
  // The vector's temp_in/humidity/light/vbat, as a node would send them.
  RadioPayload p = node3_payload();
  char line[kFrameBufferSize];
  uint8_t unknown = 99;
  size_t n = payload_to_frame(p, line, sizeof line, &unknown);
  EXPECT_EQ(std::string(line, n), expected);
  EXPECT_EQ(unknown, 0);
}

TEST(PayloadToFrame, SkipsUnknownIdsAndUnmeasuredBattery) {
  RadioPayload p = {};
  p.node_id = 12;
  p.seq = 7;
  ASSERT_TRUE(payload_add(p, 200, 5));  // from a newer node firmware
  ASSERT_TRUE(payload_add(p, kMetricTempOut, 1043));
  char line[kFrameBufferSize];
  uint8_t unknown = 0;
  size_t n = payload_to_frame(p, line, sizeof line, &unknown);
  std::string text(line, n);
  EXPECT_EQ(text.substr(0, text.find('*')), "$T1,node12,7,temp_out=10.43");
  EXPECT_EQ(unknown, 1);
  RadioPayload only_unknown = {};
  only_unknown.node_id = 1;
  ASSERT_TRUE(payload_add(only_unknown, 200, 5));
  EXPECT_EQ(payload_to_frame(only_unknown, line, sizeof line), 0u);
}

TEST(MetricIds, NamesAndScalesFollowProtocolSection6) {
  struct Row {
    uint8_t id;
    const char* name;
    uint8_t decimals;
  } rows[] = {{1, "temp_in", 2}, {2, "temp_out", 2}, {3, "temp_check", 2},
              {4, "humidity", 1}, {5, "light", 0},   {6, "temp", 2}};
  for (const Row& r : rows) {
    const MetricInfo* info = metric_info(r.id);
    ASSERT_NE(info, nullptr) << int(r.id);
    EXPECT_STREQ(info->name, r.name);
    EXPECT_EQ(info->decimals, r.decimals);
  }
  EXPECT_EQ(metric_info(0), nullptr);
  EXPECT_EQ(metric_info(7), nullptr);
  int16_t scaled = 0;
  EXPECT_TRUE(metric_scaled(kMetricTempIn, -2.5f, scaled));
  EXPECT_EQ(scaled, -250);
  EXPECT_TRUE(metric_scaled(kMetricHumidity, 81.24f, scaled));
  EXPECT_EQ(scaled, 812);
  EXPECT_FALSE(metric_scaled(kMetricTempIn, 400.0f, scaled));  // beyond int16 x 100
  EXPECT_FALSE(metric_scaled(0, 1.0f, scaled));
}
