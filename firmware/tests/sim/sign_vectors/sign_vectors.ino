// Test sketch, not for a board: signs the signed.json cases on the ATmega328P under simavr and prints each payload
// and how long signing took. The cases come in through the EEPROM (sim_uno -e), written by
// tests/sim/sign_vectors_test.cpp: a count byte, then per case key[16], node, seq, counter, vbat, send failures,
// metric count and the metric records, little-endian as in the payload.
#include <avr/eeprom.h>
#include <TelemetryNode.h>

using namespace telemetry;

uint16_t address = 0;

uint8_t next_byte() { return eeprom_read_byte(reinterpret_cast<const uint8_t*>(address++)); }
uint16_t next16() { return next_byte() | (static_cast<uint16_t>(next_byte()) << 8); }
uint32_t next32() { return next16() | (static_cast<uint32_t>(next16()) << 16); }

void print_hex(const uint8_t* bytes, uint8_t length) {
  for (uint8_t i = 0; i < length; ++i) {
    if (bytes[i] < 16) Serial.print('0');
    Serial.print(bytes[i], HEX);
  }
}

void setup() {
  Serial.begin(115200);
  uint8_t cases = next_byte();
  for (uint8_t c = 0; c < cases; ++c) {
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
    Serial.print(F("case "));
    Serial.print(c);
    Serial.print(' ');
    print_hex(out, length);
    Serial.print(F(" us="));
    Serial.println(took);
  }
  Serial.println(F("# done"));
}

void loop() {}
