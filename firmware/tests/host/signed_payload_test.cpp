#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "telemetry/message_counter.h"
#include "telemetry/signed_payload.h"
#include "vectors.h"

using namespace telemetry;

namespace {

std::vector<uint8_t> unhex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

RadioPayload payload_of(const nlohmann::json& c) {
  RadioPayload p = {};
  p.node_id = c.at("node");
  p.seq = c.at("seq");
  p.vbat_mv = c.at("vbat_mv");
  p.send_failures = c.at("send_failures");
  for (const auto& m : c.at("metrics")) EXPECT_TRUE(payload_add(p, m.at(0), m.at(1)));
  return p;
}

}  // namespace

TEST(SignedPayload, MatchesTheVectors) {
  for (const auto& c : load_vectors("signed.json")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    std::vector<uint8_t> key = unhex(c.at("key"));
    std::vector<uint8_t> expected = unhex(c.at("signed"));
    std::vector<uint8_t> tag = unhex(c.at("tag"));
    expected.insert(expected.end(), tag.begin(), tag.end());
    std::vector<uint8_t> out(kSignedMaxSize);
    out.resize(signed_payload_encode(payload_of(c), c.at("counter"), key.data(), out.data()));
    EXPECT_EQ(out, expected);
  }
}

TEST(SignedPayload, DecodesTheVectorsBack) {
  for (const auto& c : load_vectors("signed.json")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    std::vector<uint8_t> bytes = unhex(c.at("signed").get<std::string>() + c.at("tag").get<std::string>());
    RadioPayload back;
    uint32_t counter = 0;
    ASSERT_EQ(signed_payload_decode(bytes.data(), static_cast<uint8_t>(bytes.size()), back, counter), kPayloadOk);
    RadioPayload p = payload_of(c);
    EXPECT_EQ(counter, c.at("counter").get<uint32_t>());
    EXPECT_EQ(back.node_id, p.node_id);
    EXPECT_EQ(back.seq, p.seq);
    EXPECT_EQ(back.vbat_mv, p.vbat_mv);
    EXPECT_EQ(back.send_failures, p.send_failures);
    ASSERT_EQ(back.count, p.count);
    for (uint8_t i = 0; i < p.count; ++i) {
      EXPECT_EQ(back.metrics[i].id, p.metrics[i].id);
      EXPECT_EQ(back.metrics[i].scaled, p.metrics[i].scaled);
    }
  }
}

TEST(SignedPayload, RejectsBadStructure) {
  std::vector<uint8_t> good = unhex("0203FFFF00010000DB0C000106FF042C0305000093F3073505DA");
  RadioPayload out;
  uint32_t counter;
  auto decode = [&](std::vector<uint8_t> b) {
    return signed_payload_decode(b.data(), static_cast<uint8_t>(b.size()), out, counter);
  };
  EXPECT_EQ(decode(std::vector<uint8_t>(good.begin(), good.begin() + 16)), kPayloadTooShort);
  std::vector<uint8_t> b = good;
  b[0] = 1;
  EXPECT_EQ(decode(b), kPayloadBadVersion);
  b = good;
  b.pop_back();
  EXPECT_EQ(decode(b), kPayloadBadLength);
  b = good;
  b[1] = 0;
  EXPECT_EQ(decode(b), kPayloadBadNode);
  b = good;
  b[11] = 0;
  EXPECT_EQ(decode(b), kPayloadBadMetricId);
  b = good;
  b[14] = 1;  // humidity's id becomes temp_in's
  EXPECT_EQ(decode(b), kPayloadDuplicateId);
  b.assign(35, 0);  // 17 + 3 x 6: one metric too many
  b[0] = 2;
  b[1] = 1;
  EXPECT_EQ(decode(b), kPayloadBadLength);
}

TEST(SignedPayload, RefusesMoreThanFiveMetrics) {
  RadioPayload p = {};
  p.node_id = 1;
  for (uint8_t id = 1; id <= 6; ++id) ASSERT_TRUE(payload_add(p, id, id));
  uint8_t key[kKeySize] = {};
  uint8_t out[kPayloadMaxSize + kTagSize];
  EXPECT_EQ(signed_payload_encode(p, 0, key, out), 0);
}

TEST(SignedPayload, ErasedKeyIsNotProvisioned) {
  uint8_t key[kKeySize];
  for (uint8_t& b : key) b = 0xFF;
  EXPECT_FALSE(key_provisioned(key));
  key[15] = 0xFE;
  EXPECT_TRUE(key_provisioned(key));
}

TEST(MessageCounter, FreshNodeReservesTheFirstBlockBeforeItsFirstCounter) {
  CounterReservation r = counter_boot(kReservationErased);
  uint32_t counter = 99;
  ASSERT_EQ(counter_take(r, counter), kCounterStoreThenUse);
  EXPECT_EQ(counter, 0u);
  EXPECT_EQ(r.end, kCounterBlock);
  for (uint32_t i = 1; i < kCounterBlock; ++i) {
    ASSERT_EQ(counter_take(r, counter), kCounterUse);
    EXPECT_EQ(counter, i);
  }
  ASSERT_EQ(counter_take(r, counter), kCounterStoreThenUse);  // one store per block
  EXPECT_EQ(counter, kCounterBlock);
  EXPECT_EQ(r.end, 2 * kCounterBlock);
}

TEST(MessageCounter, RebootSkipsToTheStoredEndSoCountersOnlyIncrease) {
  CounterReservation r = counter_boot(kReservationErased);
  uint32_t counter;
  counter_take(r, counter);
  counter_take(r, counter);  // 0, 1 used; 256 stored
  CounterReservation after_reboot = counter_boot(r.end);
  ASSERT_EQ(counter_take(after_reboot, counter), kCounterStoreThenUse);
  EXPECT_EQ(counter, kCounterBlock);
  EXPECT_EQ(after_reboot.end, 2 * kCounterBlock);
}

TEST(MessageCounter, FailedStoreReservesAgain) {
  CounterReservation r = counter_boot(512);
  uint32_t counter;
  ASSERT_EQ(counter_take(r, counter), kCounterStoreThenUse);
  r.end = r.next;  // the store failed: counter 512 is not used
  ASSERT_EQ(counter_take(r, counter), kCounterStoreThenUse);
  EXPECT_EQ(counter, 513u);
}

TEST(MessageCounter, StopsBeforeTheStoredEndReachesTheLimit) {
  CounterReservation r = counter_boot(0xFEFFFE00UL);
  uint32_t counter;
  ASSERT_EQ(counter_take(r, counter), kCounterStoreThenUse);
  EXPECT_EQ(r.end, 0xFEFFFF00UL);
  for (uint32_t i = 1; i < kCounterBlock; ++i) counter_take(r, counter);
  EXPECT_EQ(counter, 0xFEFFFEFFUL);
  EXPECT_EQ(counter_take(r, counter), kCounterExhausted);
  EXPECT_EQ(counter_take(r, counter), kCounterExhausted);
  CounterReservation odd = counter_boot(0xFEFFFF00UL);  // a block would end on the limit FF000000
  EXPECT_EQ(counter_take(odd, counter), kCounterExhausted);
  CounterReservation high = counter_boot(0xFFFFFE00UL);
  EXPECT_EQ(counter_take(high, counter), kCounterExhausted);
}
