// What a sensor node and the base station must agree on for the nRF24L01+ link (PROTOCOL.md section 6).
#pragma once

#include <stdint.h>

// Both ends must agree on these; override on both with -D (make RF_CHANNEL=90 RF_ADDRESS_PREFIX=0x...UL).
#ifndef RF_CHANNEL
#define RF_CHANNEL 76  // 0..125 (2400 + n MHz)
#endif
#ifndef RF_ADDRESS_PREFIX
#define RF_ADDRESS_PREFIX 0x54454C45UL  // the 4 shared address bytes ("TELE")
#endif
// nRF24 control pins of the wiring table in firmware/README.md (the same on every radio board).
#ifndef CE_PIN
#define CE_PIN 9
#endif
#ifndef CSN_PIN
#define CSN_PIN 10
#endif

namespace telemetry {

const uint8_t kMaxRadioNodes = 6;  // one nRF24 reading pipe per node, ids 1..6
const uint8_t kRadioRetryDelay = 5;   // auto-retransmit delay, (n + 1) x 250 us: 1.5 ms fits a 32-byte ack at 250 kbps
const uint8_t kRadioRetryCount = 15;  // the nRF24 maximum

// Pipe address of node `node_id`: the 4 shared high bytes (nRF24 pipes 1-5 must share them) and the node id as
// the low byte, which differs per pipe.
inline uint64_t node_address(uint32_t prefix, uint8_t node_id) {
  return (static_cast<uint64_t>(prefix) << 8) | node_id;
}

inline bool valid_radio_node(uint8_t node_id) { return node_id >= 1 && node_id <= kMaxRadioNodes; }

// Starts an RF24 radio with the link settings of PROTOCOL.md 6.1; false when the chip does not answer. A template
// (the caller passes RF24_250KBPS, RF24_PA_MAX) so this library needs no RF24 or Arduino header.
template <class Radio, class DataRate, class PaLevel>
bool begin_radio_link(Radio& radio, DataRate data_rate, PaLevel pa_level) {
  if (!radio.begin() || !radio.isChipConnected()) return false;
  radio.setChannel(RF_CHANNEL);
  radio.setDataRate(data_rate);
  radio.setPALevel(pa_level);
  radio.enableDynamicPayloads();
  radio.setAutoAck(true);
  radio.setRetries(kRadioRetryDelay, kRadioRetryCount);
  return true;
}

}  // namespace telemetry
