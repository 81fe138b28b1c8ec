// HMAC-SHA256 (RFC 2104 over FIPS 180-4 SHA-256): the tag of signed radio payloads (PROTOCOL.md section 8.3).
// C linkage so that the C radio simulator can link the same code.
#pragma once

#include "sha256.h"

#ifdef __cplusplus
extern "C" {
#endif

// A key prepared once: the SHA-256 states after its inner and outer padded blocks. Each MAC then costs two
// compressions fewer (on the AVR about half the time of a short message's MAC).
typedef struct {
  uint32_t inner[8];
  uint32_t outer[8];
} hmac_sha256_key;

void hmac_sha256_prepare(hmac_sha256_key* prepared, const uint8_t* key, size_t key_length);
void hmac_sha256_prepared(const hmac_sha256_key* prepared, const uint8_t* data, size_t length,
                          uint8_t mac[SHA256_DIGEST_SIZE]);
void hmac_sha256(const uint8_t* key, size_t key_length, const uint8_t* data, size_t length,
                 uint8_t mac[SHA256_DIGEST_SIZE]);

#ifdef __cplusplus
}
#endif
