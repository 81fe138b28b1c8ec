#include "provision_line.h"

#include "crc16_ccitt.h"
#include "hmac_sha256.h"

namespace telemetry {

namespace {

const char kPrefix[] = "#provision ";
const uint8_t kPrefixLength = sizeof kPrefix - 1;
const uint8_t kKeyDigits = 2 * kKeySize;
const uint8_t kCrcDigits = 4;

int8_t hex_value(char c) {
  if (c >= '0' && c <= '9') return static_cast<int8_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int8_t>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int8_t>(c - 'A' + 10);
  return -1;
}

// n hex digits at text into value; false on any other character.
bool hex_digits(const char* text, uint8_t n, uint16_t& value) {
  value = 0;
  for (uint8_t i = 0; i < n; ++i) {
    int8_t digit = hex_value(text[i]);
    if (digit < 0) return false;
    value = static_cast<uint16_t>(value << 4 | digit);
  }
  return true;
}

}  // namespace

ProvisionVerdict provision_parse(const char* line, uint8_t length, uint8_t node_id, uint8_t key[kKeySize]) {
  for (uint8_t i = 0; i < kPrefixLength; ++i) {
    if (i >= length || line[i] != kPrefix[i]) return kProvisionFormat;
  }
  // The node id: 1-3 decimal digits, no leading zero.
  uint8_t at = kPrefixLength;
  uint16_t node = 0;
  while (at < length && line[at] >= '0' && line[at] <= '9' && at - kPrefixLength < 3) {
    if (node == 0 && at > kPrefixLength) return kProvisionFormat;
    node = static_cast<uint16_t>(node * 10 + (line[at++] - '0'));
  }
  if (at == kPrefixLength || node == 0 || node > 254) return kProvisionFormat;
  if (length != at + 1 + kKeyDigits + 1 + kCrcDigits || line[at] != ' ' || line[at + 1 + kKeyDigits] != ' ') {
    return kProvisionFormat;
  }
  uint8_t parsed[kKeySize];
  for (uint8_t i = 0; i < kKeySize; ++i) {
    uint16_t byte;
    if (!hex_digits(line + at + 1 + 2 * i, 2, byte)) return kProvisionFormat;
    parsed[i] = static_cast<uint8_t>(byte);
  }
  uint16_t crc;
  uint8_t covered = static_cast<uint8_t>(length - 1 - kCrcDigits);
  if (!hex_digits(line + covered + 1, kCrcDigits, crc)) return kProvisionFormat;
  if (crc != crc16_ccitt(line, covered)) return kProvisionCrc;
  if (node != node_id) return kProvisionNode;
  for (uint8_t i = 0; i < kKeySize; ++i) key[i] = parsed[i];
  return kProvisionOk;
}

void key_fingerprint(const uint8_t key[kKeySize], uint8_t out[kFingerprintSize]) {
  static const char kMessage[] = "telemetry counter fingerprint";
  uint8_t mac[SHA256_DIGEST_SIZE];
  hmac_sha256(key, kKeySize, reinterpret_cast<const uint8_t*>(kMessage), sizeof kMessage - 1, mac);
  for (uint8_t i = 0; i < kFingerprintSize; ++i) out[i] = mac[i];
}

}  // namespace telemetry
