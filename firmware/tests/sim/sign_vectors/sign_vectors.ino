// Test sketch, not for a board: runs crypto and signing vectors on the ATmega328P under simavr and prints the
// results (and how long each payload took to sign). The cases come in through the EEPROM (sim_uno -e), written by
// tests/sim/signing_sim_test.cpp as records, each a type byte then its fields, little-endian:
//   1 payload: key[16], node, seq, counter, vbat, send failures, metric count, the metric records -> "case <i> <hex>"
//   2 SHA-256: length, message -> "sha <i> <hex>"      3 HMAC-SHA256: key length, key, data length, data -> "mac ..."
//   0 end.
#include <avr/eeprom.h>
#include <TelemetryNode.h>

using namespace telemetry;

uint16_t address = 0;

uint8_t next_byte() { return eeprom_read_byte(reinterpret_cast<const uint8_t*>(address++)); }
uint16_t next16() { return next_byte() | (static_cast<uint16_t>(next_byte()) << 8); }
uint32_t next32() { return next16() | (static_cast<uint32_t>(next16()) << 16); }

uint8_t next_block(uint8_t* out) {
  uint8_t length = next_byte();
  for (uint8_t i = 0; i < length; ++i) out[i] = next_byte();
  return length;
}

void print_result(const __FlashStringHelper* kind, uint8_t index, const uint8_t* bytes, uint8_t length) {
  Serial.print(kind);
  Serial.print(index);
  Serial.print(' ');
  for (uint8_t i = 0; i < length; ++i) {
    if (bytes[i] < 16) Serial.print('0');
    Serial.print(bytes[i], HEX);
  }
}

void sign_case(uint8_t index) {
  uint8_t key[kKeySize];
  for (uint8_t& b : key) b = next_byte();
  RadioPayload p = {};
  p.node_id = next_byte();
  p.seq = next16();
  uint32_t counter = next32();
  p.vbat_mv = next16();
  p.send_failures = next_byte();
  uint8_t count = next_byte();
  for (uint8_t i = 0; i < count; ++i) {
    uint8_t id = next_byte();
    payload_add(p, id, static_cast<int16_t>(next16()));
  }
  // Timed as the sensor node signs: its key prepared once at boot, then each packet.
  hmac_sha256_key prepared;
  hmac_sha256_prepare(&prepared, key, kKeySize);
  uint8_t out[kSignedMaxSize];
  uint32_t start = micros();
  uint8_t length = signed_payload_encode(p, counter, prepared, out);
  uint32_t took = micros() - start;
  print_result(F("case "), index, out, length);
  Serial.print(F(" us="));
  Serial.println(took);
}

void setup() {
  Serial.begin(115200);
  static uint8_t key[160], data[160];
  uint8_t digest[SHA256_DIGEST_SIZE];
  uint8_t counts[4] = {};
  for (uint8_t type; (type = next_byte()) >= 1 && type <= 3;) {
    uint8_t index = counts[type]++;
    if (type == 1) {
      sign_case(index);
    } else if (type == 2) {
      uint8_t length = next_block(data);
      sha256(data, length, digest);
      print_result(F("sha "), index, digest, sizeof digest);
      Serial.println();
    } else {
      uint8_t key_length = next_block(key);
      uint8_t length = next_block(data);
      hmac_sha256(key, key_length, data, length, digest);
      print_result(F("mac "), index, digest, sizeof digest);
      Serial.println();
    }
  }
  Serial.println(F("# done"));
}

void loop() {}
