// The byte order in which the node raises its stored counter reservation (PROTOCOL.md 8.4): after every prefix of
// the writes, as a power cut between two EEPROM byte writes leaves them, the bytes read as a value >= the old
// reservation and never as the erased FFFFFFFF. The simulator test (tests/sim/reservation_sim_test.cpp) cuts the real
// node's writes the same way.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "telemetry/message_counter.h"

using namespace telemetry;

namespace {

// The stored values, one per byte write, on the way from stored to target.
std::vector<uint32_t> torn_states(uint32_t stored, uint32_t target) {
  std::vector<uint32_t> states;
  for (int8_t i; (i = reservation_next_byte(stored, target)) >= 0;) {
    uint32_t mask = 0xFFUL << (8 * i);
    stored = (stored & ~mask) | (target & mask);
    states.push_back(stored);
  }
  return states;
}

// What a boot makes of a stored value (the erased value counts as 0).
uint32_t as_read(uint32_t stored) { return counter_boot(stored).next; }

}  // namespace

TEST(ReservationStore, WritesTheMostSignificantChangedByteFirst) {
  EXPECT_EQ(torn_states(0x00FFFF00UL, 0x01000000UL), (std::vector<uint32_t>{0x01FFFF00UL, 0x0100FF00UL, 0x01000000UL}));
  EXPECT_EQ(torn_states(0x00012300UL, 0x00012400UL), std::vector<uint32_t>{0x00012400UL});
  EXPECT_TRUE(torn_states(0x100UL, 0x100UL).empty());
  // The order that is not safe: least significant first would pass through 0x00000000 here.
  EXPECT_EQ(reservation_next_byte(0x00FFFF00UL, 0x01000000UL), 3);
}

TEST(ReservationStore, EveryTornStateReadsAtLeastTheOldValue) {
  std::mt19937 random(33);
  uint32_t checked = 0;
  auto check = [&](uint32_t stored) {
    CounterReservation r = counter_boot(stored);
    uint32_t counter;
    if (counter_take(r, counter) != kCounterStoreThenUse) return;
    for (uint32_t state : torn_states(stored, r.end)) {  // from the bytes as they are, erased or not
      EXPECT_GE(as_read(state), as_read(stored)) << std::hex << stored << " -> " << r.end << " via " << state;
      EXPECT_NE(state, kReservationErased) << std::hex << stored << " -> " << r.end;
      ++checked;
    }
  };
  // Every carry pattern: each byte's old value just below, at and just above FF, and random ones.
  const uint8_t edges[] = {0x00, 0x01, 0x7F, 0xFE, 0xFF};
  for (uint8_t b3 : edges)
    for (uint8_t b2 : edges)
      for (uint8_t b1 : edges)
        for (uint8_t b0 : edges) check(static_cast<uint32_t>(b3) << 24 | b2 << 16 | b1 << 8 | b0);
  for (int i = 0; i < 100000; ++i) check(random());
  check(kReservationLimit - kCounterBlock - 1);
  EXPECT_GT(checked, 100000u);
}

TEST(ReservationStore, NoReservationReachesTheLimitSoNoneReadsAsErased) {
  CounterReservation r = counter_boot(kReservationLimit - kCounterBlock - 1);
  uint32_t counter;
  ASSERT_EQ(counter_take(r, counter), kCounterStoreThenUse);
  EXPECT_EQ(r.end, kReservationLimit - 1);  // the highest value ever stored: top byte FE
  for (uint32_t stored : std::vector<uint32_t>{kReservationLimit - kCounterBlock, kReservationLimit, 0xFFFFFF00UL,
                                              0xFFFFFFFEUL}) {
    CounterReservation at = counter_boot(stored);
    EXPECT_EQ(counter_take(at, counter), kCounterExhausted) << std::hex << stored;
  }
}
