// Radio payload v2: payload v1's fields plus a message counter and a truncated HMAC-SHA256 tag (PROTOCOL.md
// section 8). Little-endian, 17 + 3 x metrics bytes, at most 32.
#pragma once

#include <stdint.h>

#include "hmac_sha256.h"
#include "radio_payload.h"

namespace telemetry {

const uint8_t kSignedPayloadVersion = 2;
const uint8_t kSignedHeaderSize = 11;  // version, node, seq, counter, vbat, send failures
const uint8_t kTagSize = 6;
const uint8_t kSignedMaxMetrics = 5;
const uint8_t kSignedMinSize = kSignedHeaderSize + kTagSize;                                      // 17
const uint8_t kSignedMaxSize = kSignedMinSize + kSignedMaxMetrics * kPayloadMetricSize;  // 32
const uint8_t kKeySize = 16;

// Serialises and signs into out (at least kSignedMaxSize bytes): tag = HMAC-SHA256(key, signed bytes)[0:6].
// Returns the byte count, or 0 if the payload is invalid or has more than kSignedMaxMetrics metrics.
uint8_t signed_payload_encode(const RadioPayload& payload, uint32_t counter, const uint8_t key[kKeySize],
                              uint8_t* out);
// The same with the key prepared once (hmac_sha256_prepare), as a node signing every sample does.
uint8_t signed_payload_encode(const RadioPayload& payload, uint32_t counter, const hmac_sha256_key& key,
                              uint8_t* out);

// The structure only (version 2, node id, length 17 + 3c with c <= 5, metric ids): the tag is NOT checked here;
// whoever holds the key checks it.
PayloadError signed_payload_decode(const uint8_t* data, uint8_t length, RadioPayload& out, uint32_t& counter);

// A key of 16 bytes FF is the erased EEPROM: no key provisioned (section 8.4).
bool key_provisioned(const uint8_t key[kKeySize]);

}  // namespace telemetry
