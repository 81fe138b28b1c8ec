// The node's signing state (PROTOCOL.md section 8): its key and counter reservation in EEPROM. The EEPROM access is
// here; the counter rules are the library's (telemetry/message_counter.h).
#pragma once

#include <avr/eeprom.h>
#include <TelemetryNode.h>
#include <telemetry/eeprom_layout.h>

namespace signing {

using namespace telemetry;

hmac_sha256_key key;  // prepared at boot: two SHA-256 compressions a packet fewer
bool has_key = false;
CounterReservation reservation;
bool signed_last = false;  // whether the last encode() signed (else it sent nothing)
uint32_t last_counter;

uint32_t* reservation_cell() { return reinterpret_cast<uint32_t*>(TELEMETRY_EEPROM_RESERVATION_OFFSET); }

void load() {
  uint8_t raw[kKeySize];
  eeprom_read_block(raw, reinterpret_cast<const void*>(TELEMETRY_EEPROM_KEY_OFFSET), kKeySize);
  has_key = key_provisioned(raw);
  hmac_sha256_prepare(&key, raw, kKeySize);
  reservation = counter_boot(eeprom_read_dword(reservation_cell()));
}

// Signs payload into out (kSignedMaxSize bytes) with the next counter; 0 when there is none to use: the counters
// are exhausted, or the new reservation did not read back from EEPROM (the next sample tries again).
uint8_t encode(const RadioPayload& payload, uint8_t* out) {
  signed_last = false;
  CounterAction action = counter_take(reservation, last_counter);
  if (action == kCounterExhausted) return 0;
  if (action == kCounterStoreThenUse) {
    eeprom_update_dword(reservation_cell(), reservation.end);
    if (eeprom_read_dword(reservation_cell()) != reservation.end) {
      reservation.end = reservation.next;
      return 0;
    }
  }
  uint8_t length = signed_payload_encode(payload, last_counter, key, out);
  signed_last = length != 0;
  return length;
}

}  // namespace signing
