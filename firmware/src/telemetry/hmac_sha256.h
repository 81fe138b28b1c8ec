// HMAC-SHA256 (RFC 2104 over FIPS 180-4 SHA-256): the tag of signed radio payloads (PROTOCOL.md section 8.3).
// C linkage so that the C radio simulator can link the same code.
#pragma once

#include "sha256.h"

#ifdef __cplusplus
extern "C" {
#endif

void hmac_sha256(const uint8_t* key, size_t key_length, const uint8_t* data, size_t length,
                 uint8_t mac[SHA256_DIGEST_SIZE]);

#ifdef __cplusplus
}
#endif
