#include "crc16_ccitt.h"

namespace telemetry {

// Bitwise rather than table-driven: a 512-byte table would cost more flash than the few cycles it saves.
uint16_t crc16_ccitt_update(uint16_t crc, uint8_t byte) {
  crc ^= static_cast<uint16_t>(byte) << 8;
  for (uint8_t bit = 0; bit < 8; ++bit) {
    crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : static_cast<uint16_t>(crc << 1);
  }
  return crc;
}

uint16_t crc16_ccitt(const void* data, size_t length, uint16_t crc) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < length; ++i) crc = crc16_ccitt_update(crc, bytes[i]);
  return crc;
}

}  // namespace telemetry
