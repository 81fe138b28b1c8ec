// Base station step for a signed (version 2) radio payload: forwarded verbatim as a T2 line (PROTOCOL.md 8.6)
// once signed_payload_decode has accepted its structure. The base station holds no key: the gateway verifies the
// tag over the exact bytes the node signed.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "signed_payload.h"

namespace telemetry {

const uint8_t kSignedLineBufferSize = 83;  // "$T2,node254," + 64 hex digits + "*CRC\n" + NUL

// Writes "$T2,node<id>,<payload as uppercase hex>*<CRC>\n" plus a NUL, <id> being the payload's node id byte.
// Returns the line length including '\n', or 0 (and an empty string) when it does not fit in `capacity`.
size_t signed_payload_to_line(const uint8_t* data, uint8_t length, char* out, size_t capacity);

}  // namespace telemetry
