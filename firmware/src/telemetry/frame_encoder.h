// Frame v1 encoder (firmware/protocol/PROTOCOL.md section 1): writes one line into a caller's buffer, no heap.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "fixed_point.h"

namespace telemetry {

const size_t kFrameMaxLine = 200;                   // bytes, not counting the '\n'
const size_t kFrameBufferSize = kFrameMaxLine + 2;  // room for '\n' and the NUL

struct Metric {
  const char* key;  // [a-z][a-z0-9_]{0,15}, not "t"
  Fixed value;
};

// Writes "$T1,<source>,<seq>,<key>=<value>...*<CRC>\n" plus a NUL. Returns the line length including '\n', or 0
// (and an empty string) when an argument breaks a v1 rule or the line would not fit in `capacity` or 200 bytes.
size_t encode_frame(char* out, size_t capacity, const char* source, uint16_t seq, const Metric* metrics,
                    uint8_t count);

// Same, with the reserved key t (Unix ms, at most 15 digits) written first. A separate function so boards that
// never send t do not link 64-bit division.
size_t encode_frame_with_time(char* out, size_t capacity, const char* source, uint16_t seq, uint64_t t_ms,
                              const Metric* metrics, uint8_t count);

}  // namespace telemetry
