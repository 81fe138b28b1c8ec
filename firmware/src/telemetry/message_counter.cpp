#include "message_counter.h"

namespace telemetry {

CounterReservation counter_boot(uint32_t stored) {
  uint32_t start = stored == kReservationErased ? 0 : stored;
  return CounterReservation{start, start};
}

CounterAction counter_take(CounterReservation& r, uint32_t& counter) {
  CounterAction action = kCounterUse;
  if (r.next == r.end) {
    if (r.end >= kReservationLimit - kCounterBlock) return kCounterExhausted;
    r.end += kCounterBlock;
    action = kCounterStoreThenUse;
  }
  counter = r.next++;
  return action;
}

int8_t reservation_next_byte(uint32_t stored, uint32_t target) {
  for (int8_t i = 3; i >= 0; --i) {
    uint8_t shift = static_cast<uint8_t>(8 * i);
    if (static_cast<uint8_t>(stored >> shift) != static_cast<uint8_t>(target >> shift)) return i;
  }
  return -1;
}

}  // namespace telemetry
