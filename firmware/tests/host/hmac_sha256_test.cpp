// SHA-256 against NIST's examples (the CSRC example values for SHA-256: "abc", the 448-bit message, one million
// "a") and HMAC-SHA256 against RFC 4231's test cases 1-7.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "telemetry/hmac_sha256.h"

namespace {

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

TEST(Sha256, NistOneBlockMessage) {
  EXPECT_EQ(sha256_hex(bytes("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, NistTwoBlockMessage) {
  EXPECT_EQ(sha256_hex(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, EmptyMessage) {
  EXPECT_EQ(sha256_hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
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

TEST(HmacSha256, Rfc4231Case1) {
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(20, 0x0b), bytes("Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(HmacSha256, Rfc4231Case2ShortKey) {
  EXPECT_EQ(hmac_hex(bytes("Jefe"), bytes("what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256, Rfc4231Case3) {
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(20, 0xaa), std::vector<uint8_t>(50, 0xdd)),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(HmacSha256, Rfc4231Case4) {
  EXPECT_EQ(hmac_hex(unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"), std::vector<uint8_t>(50, 0xcd)),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}

TEST(HmacSha256, Rfc4231Case5TruncatedTo128Bits) {
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(20, 0x0c), bytes("Test With Truncation")).substr(0, 32),
            "a3b6167473100ee06e0c796c2955552b");
}

TEST(HmacSha256, Rfc4231Case6KeyLongerThanABlock) {
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(131, 0xaa), bytes("Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, Rfc4231Case7KeyAndDataLongerThanABlock) {
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(131, 0xaa),
                     bytes("This is a test using a larger than block-size key and a larger than block-size data. The "
                           "key needs to be hashed before being used by the HMAC algorithm.")),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}
