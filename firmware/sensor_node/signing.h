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

// Raises the stored reservation to target byte by byte, most significant changed byte first (never through
// eeprom_write_dword, whose byte order nothing promises): a power cut between two byte writes then leaves a value
// >= the old reservation, so the next boot still starts above every counter sent (PROTOCOL.md 8.4). False when a
// byte does not read back (a worn cell): the counter is then not used.
bool store_reservation(uint32_t target) {
  uint8_t* cell = reinterpret_cast<uint8_t*>(TELEMETRY_EEPROM_RESERVATION_OFFSET);
  for (int8_t i; (i = reservation_next_byte(eeprom_read_dword(reservation_cell()), target)) >= 0;) {
    uint8_t value = static_cast<uint8_t>(target >> (8 * i));
    eeprom_write_byte(cell + i, value);
    if (eeprom_read_byte(cell + i) != value) return false;
  }
  return true;
}

// Signs payload into out (kSignedMaxSize bytes) with the next counter; 0 when there is none to use: the counters
// are exhausted, or the new reservation did not read back from EEPROM (the next sample tries again).
uint8_t encode(const RadioPayload& payload, uint8_t* out) {
  signed_last = false;
  CounterAction action = counter_take(reservation, last_counter);
  if (action == kCounterExhausted) return 0;
  if (action == kCounterStoreThenUse && !store_reservation(reservation.end)) {
    reservation.end = reservation.next;
    return 0;
  }
  uint8_t length = signed_payload_encode(payload, last_counter, key, out);
  signed_last = length != 0;
  return length;
}

}  // namespace signing
