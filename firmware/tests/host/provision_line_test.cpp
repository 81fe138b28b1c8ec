// The provisioning line (PROTOCOL.md 8.9): what a node takes, what it refuses and why, and the check value it
// answers with (the gateway's key fingerprint, signing.md).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "telemetry/provision_line.h"

using namespace telemetry;

namespace {

const char kLine[] = "#provision 3 000102030405060708090a0b0c0d0e0f 3150";  // PROTOCOL.md 8.9's example

ProvisionVerdict parse(const std::string& line, uint8_t node_id, uint8_t key[kKeySize]) {
  return provision_parse(line.data(), static_cast<uint8_t>(line.size()), node_id, key);
}

}  // namespace

TEST(ProvisionLine, TakesTheKeyOfAGoodLineForThisNode) {
  uint8_t key[kKeySize];
  ASSERT_EQ(parse(kLine, 3, key), kProvisionOk);
  for (uint8_t i = 0; i < kKeySize; ++i) EXPECT_EQ(key[i], i);
  std::string upper = kLine;
  for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'f' ? c - 32 : c);
  uint8_t upper_key[kKeySize];
  EXPECT_EQ(parse(upper, 3, upper_key), kProvisionCrc);  // the CRC covers the digits as sent
}

TEST(ProvisionLine, RefusesAnotherNodesLineAndWritesNoKey) {
  uint8_t key[kKeySize];
  std::memset(key, 0xAA, sizeof key);
  EXPECT_EQ(parse(kLine, 4, key), kProvisionNode);
  for (uint8_t b : key) EXPECT_EQ(b, 0xAA);
}

TEST(ProvisionLine, RefusesADamagedLine) {
  uint8_t key[kKeySize];
  std::string flipped = kLine;
  flipped[20] = flipped[20] == '0' ? '1' : '0';  // one key digit changed on the way
  EXPECT_EQ(parse(flipped, 3, key), kProvisionCrc);
  std::string bad_crc = kLine;
  bad_crc.back() = '1';
  EXPECT_EQ(parse(bad_crc, 3, key), kProvisionCrc);
}

TEST(ProvisionLine, RefusesMalformedLines) {
  uint8_t key[kKeySize];
  for (const std::string& line : {
           std::string(""), std::string("#provision"), std::string("#provision "),
           std::string("#provisio 3 000102030405060708090a0b0c0d0e0f 3150"),
           std::string("#provision 03 000102030405060708090a0b0c0d0e0f 3150"),   // leading zero
           std::string("#provision 0 000102030405060708090a0b0c0d0e0f 3150"),    // node 0
           std::string("#provision 255 000102030405060708090a0b0c0d0e0f 3150"),  // node 255
           std::string("#provision 1000 000102030405060708090a0b0c0d0e0f 3150"),
           std::string("#provision 3 000102030405060708090a0b0c0d0e0 3150"),    // 31 digits
           std::string("#provision 3 000102030405060708090a0b0c0d0e0fa 3150"),  // 33 digits
           std::string("#provision 3 000102030405060708090a0b0c0d0e0g 3150"),   // not hex
           std::string("#provision 3  000102030405060708090a0b0c0d0e0f 3150"),
           std::string("#provision 3 000102030405060708090a0b0c0d0e0f 315"),
           std::string("#provision 3 000102030405060708090a0b0c0d0e0f 31500"),
           std::string("#provision 3 000102030405060708090a0b0c0d0e0f 31G0"),
           std::string("#provision 3 000102030405060708090a0b0c0d0e0f 3150 "),
       }) {
    SCOPED_TRACE(line);
    EXPECT_EQ(parse(line, 3, key), kProvisionFormat);
  }
}

TEST(ProvisionLine, AnswersWithTheGatewaysKeyFingerprint) {
  const uint8_t key[kKeySize] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  uint8_t fingerprint[kFingerprintSize];
  key_fingerprint(key, fingerprint);
  // gateway/contract/vectors/signing.jsonl: node3's fingerprint under this key.
  const uint8_t expected[kFingerprintSize] = {0x0a, 0xb3, 0xb8, 0x52, 0x71, 0x3a, 0x28, 0x54};
  EXPECT_EQ(0, std::memcmp(fingerprint, expected, sizeof expected));
}
