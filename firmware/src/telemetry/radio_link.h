// What a sensor node and the base station must agree on for the nRF24L01+ link (PROTOCOL.md section 6).
#pragma once

#include <stdint.h>

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

}  // namespace telemetry
