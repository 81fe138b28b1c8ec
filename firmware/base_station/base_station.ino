// Base station: receives radio payloads from up to 6 sensor nodes and prints one line per payload on USB serial
// (a v1 frame for a v1 payload, a T2 line carrying a signed v2 payload verbatim), plus "#" status lines. Nothing
// here waits on the radio, so a missing or silent radio cannot hang it.
#include "station_config.h"  // first: its settings win over library defaults
#include <SPI.h>
#include <RF24.h>
#include <TelemetryNode.h>

using namespace telemetry;

const uint8_t kMaxPayloadsPerLoop = 3;  // bounded so status lines still come out under a flood

RF24 radio(CE_PIN, CSN_PIN);
bool radio_ok = false;
uint32_t received = 0, frames = 0, rejected = 0;
uint8_t node_failures[kMaxRadioNodes];
unsigned long last_status_ms = 0;

void print_radio_state(const __FlashStringHelper* state) {
  Serial.print(F("# radio "));
  Serial.println(state);
}

bool start_radio() {
  if (!begin_radio_link(radio, RF24_250KBPS, RF24_PA_MAX)) return false;
  for (uint8_t pipe = 0; pipe < kMaxRadioNodes; ++pipe) {
    radio.openReadingPipe(pipe, node_address(RF_ADDRESS_PREFIX, pipe + 1));
  }
  radio.startListening();
  return true;
}

void reject(const __FlashStringHelper* why, uint8_t pipe, uint8_t detail) {
  ++rejected;
  Serial.print(F("# reject "));
  Serial.print(why);
  Serial.print(F(" pipe="));
  Serial.print(pipe);
  Serial.print(F(" detail="));
  Serial.println(detail);
}

void report_send_failures(uint8_t node_id, uint8_t send_failures) {
  uint8_t& last = node_failures[node_id - 1];
  if (send_failures == last) return;
  last = send_failures;
  Serial.print(F("# node"));
  Serial.print(node_id);
  Serial.print(F(" send_failures="));
  Serial.println(send_failures);
}

// A signed payload goes out byte for byte: the gateway checks its tag over exactly these bytes.
void forward_signed(const uint8_t* bytes, uint8_t length, uint8_t pipe) {
  RadioPayload payload;
  uint32_t counter;
  PayloadError error = signed_payload_decode(bytes, length, payload, counter);
  if (error != kPayloadOk) return reject(F("payload"), pipe, error);
  if (!valid_radio_node(payload.node_id) || payload.node_id != pipe + 1) {
    return reject(F("node_pipe"), pipe, payload.node_id);
  }
  report_send_failures(payload.node_id, payload.send_failures);
  char line[kSignedLineBufferSize];
  size_t n = signed_payload_to_line(bytes, length, line, sizeof line);
  Serial.write(line, n);
  ++frames;
}

void handle_payload(uint8_t pipe) {
  uint8_t bytes[kPayloadMaxSize];
  uint8_t length = radio.getDynamicPayloadSize();  // 0 when the radio flushed a corrupt (> 32 byte) payload
  if (length == 0) return reject(F("payload_size"), pipe, 0);
  radio.read(bytes, length);
  ++received;
  if (bytes[0] == kSignedPayloadVersion) return forward_signed(bytes, length, pipe);
  RadioPayload payload;
  PayloadError error = payload_decode(bytes, length, payload);
  if (error != kPayloadOk) return reject(F("payload"), pipe, error);
  if (!valid_radio_node(payload.node_id) || payload.node_id != pipe + 1) {
    return reject(F("node_pipe"), pipe, payload.node_id);  // also keeps node_failures[] in bounds
  }
  report_send_failures(payload.node_id, payload.send_failures);
  char line[kFrameBufferSize];
  uint8_t unknown = 0;
  size_t n = payload_to_frame(payload, line, sizeof line, &unknown);
  if (n == 0) return reject(F("no_metric"), pipe, unknown);
  Serial.write(line, n);
  ++frames;
}

void print_stats() {
  Serial.print(F("# stats uptime_s="));
  Serial.print(millis() / 1000UL);
  Serial.print(F(" radio="));
  Serial.print(radio_ok ? F("ok") : F("missing"));
  Serial.print(F(" received="));
  Serial.print(received);
  Serial.print(F(" frames="));
  Serial.print(frames);
  Serial.print(F(" rejected="));
  Serial.println(rejected);
}

void setup() {
  Serial.begin(115200);
  Serial.print(F("# boot base_station protocol=T1,T2 payload=v1,v2 channel="));
  Serial.print(RF_CHANNEL);
  Serial.print(F(" nodes=1-"));
  Serial.println(kMaxRadioNodes);
  radio_ok = start_radio();
  print_radio_state(radio_ok ? F("ok") : F("missing"));
  last_status_ms = millis();
}

void loop() {
  uint8_t pipe;
  for (uint8_t i = 0; radio_ok && i < kMaxPayloadsPerLoop && radio.available(&pipe); ++i) handle_payload(pipe);

  if (millis() - last_status_ms >= STATUS_SECONDS * 1000UL) {
    last_status_ms += STATUS_SECONDS * 1000UL;
    if (!radio_ok) {
      radio_ok = start_radio();  // plugged in late or recovered: say so once
      if (radio_ok) print_radio_state(F("ok"));
    } else if (!radio.isChipConnected()) {
      radio_ok = false;
      print_radio_state(F("lost"));
    }
    print_stats();
  }
}
