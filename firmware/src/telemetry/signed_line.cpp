#include "signed_line.h"

#include "crc16_ccitt.h"
#include "payload_to_frame.h"

namespace telemetry {
namespace {

const char kHex[] = "0123456789ABCDEF";

char* put_hex(char* p, uint8_t byte) {
  *p++ = kHex[byte >> 4];
  *p++ = kHex[byte & 0xF];
  return p;
}

}  // namespace

size_t signed_payload_to_line(const uint8_t* data, uint8_t length, char* out, size_t capacity) {
  char source[kNodeSourceSize];
  uint8_t source_length = node_source(length > 1 ? data[1] : 0, source);
  // "$T2," source "," hex "*" CRC "\n" NUL
  size_t needed = 4 + source_length + 1 + 2 * static_cast<size_t>(length) + 1 + 4 + 1 + 1;
  if (length < 2 || needed > capacity) {
    if (capacity) out[0] = '\0';
    return 0;
  }
  char* p = out;
  for (const char* s = "$T2,"; *s; ++s) *p++ = *s;
  for (uint8_t i = 0; i < source_length; ++i) *p++ = source[i];
  *p++ = ',';
  for (uint8_t i = 0; i < length; ++i) p = put_hex(p, data[i]);
  uint16_t crc = crc16_ccitt(out + 1, static_cast<size_t>(p - out - 1));
  *p++ = '*';
  p = put_hex(p, static_cast<uint8_t>(crc >> 8));
  p = put_hex(p, static_cast<uint8_t>(crc & 0xFF));
  *p++ = '\n';
  *p = '\0';
  return static_cast<size_t>(p - out);
}

}  // namespace telemetry
