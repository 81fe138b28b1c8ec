#include "hmac_sha256.h"

#include <string.h>

namespace {

// The key padded (or first hashed, when longer than a block) to one block, xored with pad (RFC 2104 section 2).
void start(sha256_ctx* ctx, const uint8_t* key, size_t key_length, uint8_t pad) {
  uint8_t block[SHA256_BLOCK_SIZE];
  memset(block, 0, sizeof block);
  if (key_length > SHA256_BLOCK_SIZE) {
    sha256(key, key_length, block);
  } else {
    memcpy(block, key, key_length);
  }
  for (uint8_t i = 0; i < SHA256_BLOCK_SIZE; ++i) block[i] ^= pad;
  sha256_init(ctx);
  sha256_update(ctx, block, sizeof block);
}

}  // namespace

extern "C" void hmac_sha256(const uint8_t* key, size_t key_length, const uint8_t* data, size_t length,
                            uint8_t mac[SHA256_DIGEST_SIZE]) {
  sha256_ctx ctx;
  uint8_t inner[SHA256_DIGEST_SIZE];
  start(&ctx, key, key_length, 0x36);
  sha256_update(&ctx, data, length);
  sha256_final(&ctx, inner);
  start(&ctx, key, key_length, 0x5c);
  sha256_update(&ctx, inner, sizeof inner);
  sha256_final(&ctx, mac);
}
