// SHA-256 (FIPS 180-4), streaming. C linkage so that the C radio simulator can link the same code.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64

typedef struct {
  uint32_t state[8];
  uint32_t bit_count_low;  // message length in bits, low word; the high word covers messages past 512 MiB
  uint32_t bit_count_high;
  uint8_t block[SHA256_BLOCK_SIZE];
  uint8_t fill;  // bytes waiting in block
} sha256_ctx;

void sha256_init(sha256_ctx* ctx);
// Continues from a state saved after `blocks` whole blocks (an HMAC key's padded blocks, hmac_sha256.h).
void sha256_resume(sha256_ctx* ctx, const uint32_t state[8], uint32_t blocks);
void sha256_update(sha256_ctx* ctx, const uint8_t* data, size_t length);
void sha256_final(sha256_ctx* ctx, uint8_t digest[SHA256_DIGEST_SIZE]);
void sha256(const uint8_t* data, size_t length, uint8_t digest[SHA256_DIGEST_SIZE]);

#ifdef __cplusplus
}
#endif
