#include "sha256.h"

#include <string.h>

#ifdef __AVR__
#include <avr/pgmspace.h>
#define K_WORD(i) pgm_read_dword(&kRoundConstants[i])
#else
#define PROGMEM
#define K_WORD(i) kRoundConstants[i]
#endif

namespace {

// FIPS 180-4 section 4.2.2; kept in flash on AVR, where RAM is 2 KiB.
const uint32_t kRoundConstants[64] PROGMEM = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// FIPS 180-4 section 5.3.3.
const uint32_t kInitialState[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t rotr1(uint32_t x) { return (x >> 1) | ((x & 1) ? 0x80000000UL : 0); }
inline uint32_t rotl1(uint32_t x) { return (x << 1) | ((x & 0x80000000UL) ? 1 : 0); }

// Rotate right by n (a constant, 0..27). The AVR has no barrel shifter: gcc shifts a 32-bit word one bit per loop
// turn, so rotate by whole bytes (register moves), then by at most 4 single bits either way: about 3x faster.
__attribute__((always_inline)) inline uint32_t rotr(uint32_t x, uint8_t n) {
  uint8_t whole = static_cast<uint8_t>((n + 4) & ~7);  // n rounded to the nearest multiple of 8
  if (whole == 8) x = (x >> 8) | (x << 24);
  if (whole == 16) x = (x >> 16) | (x << 16);
  if (whole == 24) x = (x >> 24) | (x << 8);
  for (uint8_t i = whole; i < n; ++i) x = rotr1(x);
  for (uint8_t i = n; i < whole; ++i) x = rotl1(x);
  return x;
}

uint32_t load_be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | p[3];
}

void store_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// One 64-byte block (FIPS 180-4 section 6.2.2). The message schedule is kept as a rolling window of 16 words
// (W[t] computed in place of W[t-16]) rather than all 64: 192 bytes less stack on a 2 KiB chip.
void compress(uint32_t state[8], const uint8_t block[SHA256_BLOCK_SIZE]) {
  uint32_t w[16];
  for (uint8_t t = 0; t < 16; ++t) w[t] = load_be32(block + 4 * t);
  uint32_t v[8];
  memcpy(v, state, sizeof v);  // a b c d e f g h
  for (uint8_t t = 0; t < 64; ++t) {
    uint32_t wt;
    if (t < 16) {
      wt = w[t];
    } else {
      uint32_t w15 = w[(t - 15) & 15], w2 = w[(t - 2) & 15];
      uint32_t s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3);
      uint32_t s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10);
      wt = w[t & 15] = w[t & 15] + s0 + w[(t - 7) & 15] + s1;
    }
    uint32_t e = v[4];
    uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) + K_WORD(t) + wt;
    uint32_t a = v[0];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
    memmove(v + 1, v, 7 * sizeof(uint32_t));
    v[4] += t1;
    v[0] = t1 + t2;
  }
  for (uint8_t i = 0; i < 8; ++i) state[i] += v[i];
}

}  // namespace

extern "C" {

void sha256_resume(sha256_ctx* ctx, const uint32_t state[8], uint32_t blocks) {
  memcpy(ctx->state, state, sizeof ctx->state);
  ctx->bit_count_low = blocks << 9;  // 512 bits a block
  ctx->bit_count_high = blocks >> 23;
  ctx->fill = 0;
}

void sha256_init(sha256_ctx* ctx) { sha256_resume(ctx, kInitialState, 0); }

void sha256_update(sha256_ctx* ctx, const uint8_t* data, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    ctx->block[ctx->fill++] = data[i];
    if (ctx->fill == SHA256_BLOCK_SIZE) {
      compress(ctx->state, ctx->block);
      ctx->fill = 0;
    }
    ctx->bit_count_low += 8;
    if (ctx->bit_count_low == 0) ++ctx->bit_count_high;
  }
}

// Padding of FIPS 180-4 section 5.1.1: a 1 bit, zeros, then the 64-bit big-endian message length in bits.
void sha256_final(sha256_ctx* ctx, uint8_t digest[SHA256_DIGEST_SIZE]) {
  uint32_t low = ctx->bit_count_low, high = ctx->bit_count_high;
  ctx->block[ctx->fill++] = 0x80;
  if (ctx->fill > SHA256_BLOCK_SIZE - 8) {
    memset(ctx->block + ctx->fill, 0, SHA256_BLOCK_SIZE - ctx->fill);
    compress(ctx->state, ctx->block);
    ctx->fill = 0;
  }
  memset(ctx->block + ctx->fill, 0, SHA256_BLOCK_SIZE - 8 - ctx->fill);
  store_be32(ctx->block + SHA256_BLOCK_SIZE - 8, high);
  store_be32(ctx->block + SHA256_BLOCK_SIZE - 4, low);
  compress(ctx->state, ctx->block);
  for (uint8_t i = 0; i < 8; ++i) store_be32(digest + 4 * i, ctx->state[i]);
}

void sha256(const uint8_t* data, size_t length, uint8_t digest[SHA256_DIGEST_SIZE]) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data, length);
  sha256_final(&ctx, digest);
}

}  // extern "C"
