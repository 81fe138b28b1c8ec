// SHA-256 against NIST's examples and HMAC-SHA256 against RFC 4231's test cases 1-7 (tests/vectors/crypto.json,
// which the simulated ATmega328P runs too), plus one million "a" and the padding's edges.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "telemetry/hmac_sha256.h"

namespace {

nlohmann::json crypto_vectors() {
  std::ifstream in(CRYPTO_VECTORS);
  return nlohmann::json::parse(in);
}

std::vector<uint8_t> bytes(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

std::vector<uint8_t> unhex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string hex(const uint8_t* data, size_t length) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

std::string sha256_hex(const std::vector<uint8_t>& message) {
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256(message.data(), message.size(), digest);
  return hex(digest, sizeof digest);
}

std::string hmac_hex(const std::vector<uint8_t>& key, const std::vector<uint8_t>& data) {
  uint8_t mac[SHA256_DIGEST_SIZE];
  hmac_sha256(key.data(), key.size(), data.data(), data.size(), mac);
  return hex(mac, sizeof mac);
}

}  // namespace

TEST(Sha256, OfficialVectors) {
  for (const auto& c : crypto_vectors().at("sha256")) {
    EXPECT_EQ(sha256_hex(unhex(c.at("message"))), c.at("digest").get<std::string>()) << c.at("name");
  }
}

TEST(Sha256, NistMillionA) {
  EXPECT_EQ(sha256_hex(std::vector<uint8_t>(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingEdgesAndStreamingMatchOneShot) {
  // 55, 56 and 64 bytes: the length field fits, just does not fit, and a whole block (FIPS 180-4 5.1.1); the
  // digests are Python's hashlib's.
  EXPECT_EQ(sha256_hex(std::vector<uint8_t>(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::vector<uint8_t>(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::vector<uint8_t>(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  std::vector<uint8_t> message = bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
  sha256_ctx ctx;
  sha256_init(&ctx);
  for (uint8_t b : message) sha256_update(&ctx, &b, 1);
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_final(&ctx, digest);
  EXPECT_EQ(hex(digest, sizeof digest), sha256_hex(message));
}

TEST(HmacSha256, Rfc4231Vectors) {
  for (const auto& c : crypto_vectors().at("hmac_sha256")) {
    std::string expected = c.at("mac");  // case 5 gives the first 128 bits only
    EXPECT_EQ(hmac_hex(unhex(c.at("key")), unhex(c.at("data"))).substr(0, expected.size()), expected) << c.at("name");
  }
}
