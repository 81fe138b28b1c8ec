// The message counter of signed payloads, reserved in EEPROM in blocks (PROTOCOL.md section 8.4): one EEPROM write
// per block, a reboot skips the rest of its block, and a counter is never used before its block is stored.
#pragma once

#include <stdint.h>

namespace telemetry {

const uint32_t kCounterBlock = 256;
const uint32_t kReservationErased = 0xFFFFFFFFUL;
// Every stored reservation stays below this, so its most significant byte is never FF: no state of its four
// bytes, whole or torn between two byte writes, reads as the erased FFFFFFFF (which counts as 0).
const uint32_t kReservationLimit = 0xFF000000UL;

struct CounterReservation {
  uint32_t next;  // the next counter to use
  uint32_t end;   // counters below end are covered by the stored reservation
};

enum CounterAction : uint8_t {
  kCounterUse,            // send with the counter
  kCounterStoreThenUse,   // store r.end in EEPROM first (and read it back), then send with the counter
  kCounterExhausted,      // no block left below kReservationLimit: send nothing (the node needs a new key)
};

// From the reservation read from EEPROM at boot: nothing reserved yet by this boot.
CounterReservation counter_boot(uint32_t stored);

// Takes the next counter. On kCounterStoreThenUse the caller stores r.end before using counter; if that store fails
// the counter must not be used, and the caller sets r.end = r.next so that the next call reserves again.
CounterAction counter_take(CounterReservation& r, uint32_t& counter);

// Raising the stored reservation from `stored` to `target` (target > stored) one EEPROM byte at a time: the byte
// (0..3 of the little-endian uint32) to write next, or -1 once it holds target. It is the most significant byte that
// differs, so after any prefix of these writes the bytes read as a value >= the old one: a power cut between two
// byte writes can only raise the reservation, never lower it below a counter already sent (PROTOCOL.md 8.4).
int8_t reservation_next_byte(uint32_t stored, uint32_t target);

}  // namespace telemetry
