#include "hmac_sha256.h"

#include <string.h>

namespace {

// The state after hashing the key padded (or first hashed, when longer than a block) to one block and xored with
// pad (RFC 2104 section 2).
void pad_state(uint32_t state[8], const uint8_t* key, size_t key_length, uint8_t pad) {
  uint8_t block[SHA256_BLOCK_SIZE];
  memset(block, 0, sizeof block);
  if (key_length > SHA256_BLOCK_SIZE) {
    sha256(key, key_length, block);
  } else {
    memcpy(block, key, key_length);
  }
  for (uint8_t i = 0; i < SHA256_BLOCK_SIZE; ++i) block[i] ^= pad;
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, block, sizeof block);  // exactly one block: compressed into ctx.state
  memcpy(state, ctx.state, sizeof ctx.state);
}

}  // namespace

extern "C" {

void hmac_sha256_prepare(hmac_sha256_key* prepared, const uint8_t* key, size_t key_length) {
  pad_state(prepared->inner, key, key_length, 0x36);
  pad_state(prepared->outer, key, key_length, 0x5c);
}

void hmac_sha256_prepared(const hmac_sha256_key* prepared, const uint8_t* data, size_t length,
                          uint8_t mac[SHA256_DIGEST_SIZE]) {
  sha256_ctx ctx;
  uint8_t inner[SHA256_DIGEST_SIZE];
  sha256_resume(&ctx, prepared->inner, 1);
  sha256_update(&ctx, data, length);
  sha256_final(&ctx, inner);
  sha256_resume(&ctx, prepared->outer, 1);
  sha256_update(&ctx, inner, sizeof inner);
  sha256_final(&ctx, mac);
}

void hmac_sha256(const uint8_t* key, size_t key_length, const uint8_t* data, size_t length,
                 uint8_t mac[SHA256_DIGEST_SIZE]) {
  hmac_sha256_key prepared;
  hmac_sha256_prepare(&prepared, key, key_length);
  hmac_sha256_prepared(&prepared, data, length, mac);
}

}  // extern "C"
