// Provisioning over the USB serial line (PROTOCOL.md 8.9): for a short window after reset (opening the port resets
// an Uno) the node takes a line `#provision <node> <key hex> <crc>`, writes the key into EEPROM and answers with
// the key's fingerprint, never the key. The sketch writes the EEPROM because the Uno's stock bootloader cannot.
#pragma once

#include <avr/eeprom.h>
#include <string.h>
#include <telemetry/eeprom_layout.h>
#include <telemetry/provision_line.h>

namespace provisioning {

using namespace telemetry;

const uint16_t kWindowMs = 1000;  // from the boot line on; the provision script answers it at once

void* key_cell() { return reinterpret_cast<void*>(TELEMETRY_EEPROM_KEY_OFFSET); }

void print_hex(const uint8_t* bytes, uint8_t n) {
  for (uint8_t i = 0; i < 2 * n; ++i) {
    uint8_t digit = i & 1 ? bytes[i / 2] & 15 : bytes[i / 2] >> 4;
    Serial.print(static_cast<char>(digit < 10 ? '0' + digit : 'a' + digit - 10));
  }
}

// Writes the key's bytes that differ (the counter reservation stays as it is: PROTOCOL.md 8.9) and reads them
// back; the fingerprint answered is the read-back key's, so it vouches for what the EEPROM holds.
bool store_key(const uint8_t key[kKeySize], uint8_t stored[kKeySize], bool& same) {
  eeprom_read_block(stored, key_cell(), kKeySize);
  same = memcmp(stored, key, kKeySize) == 0;
  eeprom_update_block(key, key_cell(), kKeySize);
  eeprom_read_block(stored, key_cell(), kKeySize);
  return memcmp(stored, key, kKeySize) == 0;
}

// Answers one line; true when the key is stored.
bool answer(const char* line, uint8_t length) {
  uint8_t key[kKeySize], stored[kKeySize];
  bool same = false;
  ProvisionVerdict verdict = provision_parse(line, length, NODE_ID, key);
  if (verdict == kProvisionOk && store_key(key, stored, same)) {
    uint8_t fingerprint[kFingerprintSize];
    key_fingerprint(stored, fingerprint);
    Serial.print(F("# provisioned node="));
    Serial.print(NODE_ID);
    Serial.print(F(" key_fingerprint="));
    print_hex(fingerprint, kFingerprintSize);
    Serial.println(same ? F(" key=same") : F(" key=new"));
    return true;
  }
  Serial.print(F("# provision refused node="));
  Serial.print(NODE_ID);
  Serial.print(F(" reason="));
  if (verdict == kProvisionFormat) Serial.println(F("format"));
  if (verdict == kProvisionCrc) Serial.println(F("crc"));
  if (verdict == kProvisionNode) Serial.println(F("node_id"));
  if (verdict == kProvisionOk) Serial.println(F("eeprom"));  // the key did not read back: a worn cell
  return false;
}

// Listens for kWindowMs, answering each line; true once a key is stored (the caller loads it).
bool listen() {
  char line[kProvisionLineMax];
  uint8_t length = 0;
  for (uint32_t start = millis(); millis() - start < kWindowMs;) {
    if (!Serial.available()) continue;
    char c = static_cast<char>(Serial.read());
    if (c == '\r') continue;
    if (c != '\n') {
      if (length < sizeof line) line[length++] = c;  // a longer line stays too long: refused as format
      continue;
    }
    if (length && answer(line, length)) return true;
    length = 0;
  }
  return false;
}

}  // namespace provisioning
