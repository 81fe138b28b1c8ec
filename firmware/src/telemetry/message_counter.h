// The message counter of signed payloads, reserved in EEPROM in blocks (PROTOCOL.md section 8.4): one EEPROM write
// per block, a reboot skips the rest of its block, and a counter is never used before its block is stored.
#pragma once

#include <stdint.h>

namespace telemetry {

const uint32_t kCounterBlock = 256;
const uint32_t kReservationErased = 0xFFFFFFFFUL;

struct CounterReservation {
  uint32_t next;  // the next counter to use
  uint32_t end;   // counters below end are covered by the stored reservation
};

enum CounterAction : uint8_t {
  kCounterUse,            // send with the counter
  kCounterStoreThenUse,   // store r.end in EEPROM first (and read it back), then send with the counter
  kCounterExhausted,      // no block left below FFFFFFFF: send nothing (the node needs a new key)
};

// From the reservation read from EEPROM at boot: nothing reserved yet by this boot.
CounterReservation counter_boot(uint32_t stored);

// Takes the next counter. On kCounterStoreThenUse the caller stores r.end before using counter; if that store fails
// the counter must not be used, and the caller sets r.end = r.next so that the next call reserves again.
CounterAction counter_take(CounterReservation& r, uint32_t& counter);

}  // namespace telemetry
