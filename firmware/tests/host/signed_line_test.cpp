// The base station's v2 step (PROTOCOL.md 8.6): the shared vectors, reject codes and a line that does not fit.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "telemetry/signed_line.h"
#include "vectors.h"

using namespace telemetry;

namespace {

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), 0, 16)));
  }
  return bytes;
}

}  // namespace

TEST(SignedLine, MatchesTheT2Vectors) {
  const std::map<std::string, PayloadError> reasons = {
      {"too_short", kPayloadTooShort},         {"bad_version", kPayloadBadVersion},
      {"bad_length", kPayloadBadLength},       {"bad_node", kPayloadBadNode},
      {"bad_metric_id", kPayloadBadMetricId},  {"duplicate_id", kPayloadDuplicateId}};
  int cases = 0;
  for (const auto& c : load_vectors("t2_line.json")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    std::vector<uint8_t> payload = from_hex(c.at("payload"));
    uint8_t length = static_cast<uint8_t>(payload.size());
    RadioPayload decoded;
    uint32_t counter;
    PayloadError error = signed_payload_decode(payload.data(), length, decoded, counter);
    if (c.at("line").is_null()) {
      EXPECT_EQ(error, reasons.at(c.at("reject")));
    } else {
      ASSERT_EQ(error, kPayloadOk);
      char line[kSignedLineBufferSize];
      size_t n = signed_payload_to_line(payload.data(), length, line, sizeof line);
      EXPECT_EQ(std::string(line, n), c.at("line").get<std::string>());
      EXPECT_EQ(line[n], '\0');
    }
    ++cases;
  }
  EXPECT_GE(cases, 13);
}

TEST(SignedLine, RefusesABufferTooSmallWhole) {
  std::vector<uint8_t> payload = from_hex("02010000000000000000FF8363F03F5326");  // 17 bytes: a 50-byte line
  char line[64];
  EXPECT_EQ(signed_payload_to_line(payload.data(), 17, line, 50), 0u);  // no room for the NUL
  EXPECT_STREQ(line, "");
  EXPECT_EQ(signed_payload_to_line(payload.data(), 17, line, 51), 50u);
}

TEST(SignedLine, TheLongestLineFitsTheBaseStationsBuffer) {
  std::vector<uint8_t> payload(kSignedMaxSize, 0xAB);
  payload[1] = 254;
  char line[kSignedLineBufferSize];
  EXPECT_EQ(signed_payload_to_line(payload.data(), kSignedMaxSize, line, sizeof line), 82u);  // 81 + '\n'
}
