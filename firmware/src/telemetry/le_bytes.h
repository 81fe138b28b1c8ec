// Little-endian field access for the radio payloads (PROTOCOL.md section 6.2 and 8.2).
#pragma once

#include <stdint.h>

namespace telemetry {

inline void put_le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

inline void put_le32(uint8_t* p, uint32_t v) {
  put_le16(p, static_cast<uint16_t>(v));
  put_le16(p + 2, static_cast<uint16_t>(v >> 16));
}

inline uint16_t get_le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8)); }

inline uint32_t get_le32(const uint8_t* p) { return get_le16(p) | (static_cast<uint32_t>(get_le16(p + 2)) << 16); }

}  // namespace telemetry
