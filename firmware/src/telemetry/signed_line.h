// Base station step for a signed (version 2) radio payload: checked for shape only and forwarded verbatim as a T2
// line (PROTOCOL.md 8.6). The base station holds no key: the gateway verifies the tag over the exact bytes signed.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "radio_payload.h"

namespace telemetry {

const uint8_t kSignedVersion = 2;
const uint8_t kSignedHeaderSize = 11;  // version, node id, seq, counter, vbat, send failures
const uint8_t kSignedTagSize = 6;
const uint8_t kSignedMaxMetrics = 5;   // 17 + 3 x 5 = 32 bytes, one nRF24 packet
const uint8_t kSignedNodeOffset = 1;
const uint8_t kSignedFailuresOffset = 10;
const uint8_t kSignedLineBufferSize = 83;  // "$T2,node254," + 64 hex digits + "*CRC\n" + NUL

// kPayloadOk, kPayloadTooShort (shorter than header + tag), kPayloadBadVersion, kPayloadBadLength (not
// 17 + 3c with c <= 5) or kPayloadBadNode (0 or 255).
PayloadError signed_payload_check(const uint8_t* data, uint8_t length);

// Writes "$T2,node<id>,<payload as uppercase hex>*<CRC>\n" plus a NUL. Returns the line length including '\n', or
// 0 (and an empty string) when the payload fails signed_payload_check or the line does not fit in `capacity`.
size_t signed_payload_to_line(const uint8_t* data, uint8_t length, char* out, size_t capacity);

}  // namespace telemetry
