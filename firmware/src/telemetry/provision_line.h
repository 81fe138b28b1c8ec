// The provisioning line (PROTOCOL.md 8.9): a node's key sent over its USB serial line, checked before anything is
// written to EEPROM, and the check value the node answers with. No Arduino headers: host-tested.
#pragma once

#include <stdint.h>

#include "signed_payload.h"

namespace telemetry {

const uint8_t kProvisionLineMax = 64;  // longest line a node takes (`#provision 254 <32 hex> <4 hex>` is 53)
const uint8_t kFingerprintSize = 8;

enum ProvisionVerdict : uint8_t {
  kProvisionOk,
  kProvisionFormat,  // not `#provision <node> <32 hex digits> <4 hex digits>`
  kProvisionCrc,     // the CRC does not match: a damaged line, nothing is written
  kProvisionNode,    // a line for another node id than the one this board was built as
};

// Checks `line` (without its line ending) for a board built as node_id; on kProvisionOk the key is in key.
ProvisionVerdict provision_parse(const char* line, uint8_t length, uint8_t node_id, uint8_t key[kKeySize]);

// The key's fingerprint, as the gateway stores it with a counter (gateway/contract/signing.md): the first 8 bytes
// of HMAC-SHA256(key, "telemetry counter fingerprint"). It names a key without revealing it.
void key_fingerprint(const uint8_t key[kKeySize], uint8_t out[kFingerprintSize]);

}  // namespace telemetry
