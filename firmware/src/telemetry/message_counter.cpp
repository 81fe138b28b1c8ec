#include "message_counter.h"

namespace telemetry {

CounterReservation counter_boot(uint32_t stored) {
  uint32_t start = stored == kReservationErased ? 0 : stored;
  return CounterReservation{start, start};
}

CounterAction counter_take(CounterReservation& r, uint32_t& counter) {
  CounterAction action = kCounterUse;
  if (r.next == r.end) {
    // The stored end must stay below FFFFFFFF, which reads back as an erased (zero) reservation.
    if (r.end >= kReservationErased - kCounterBlock) return kCounterExhausted;
    r.end += kCounterBlock;
    action = kCounterStoreThenUse;
  }
  counter = r.next++;
  return action;
}

}  // namespace telemetry
