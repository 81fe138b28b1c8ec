// Base station step: one decoded radio payload -> one v1 frame line with source "node<id>" (PROTOCOL.md 6.4).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "frame_encoder.h"
#include "radio_payload.h"

namespace telemetry {

const uint8_t kNodeSourceSize = 8;  // "node" + up to 3 digits + NUL

// Writes the frame source of radio node `id`, "node<id>" (decimal, no leading zeros), and returns its length.
uint8_t node_source(uint8_t id, char out[kNodeSourceSize]);

// Metrics in payload order, then vbat (V, 3 decimals) when measured. Ids this firmware does not know are left out
// and counted in *unknown_ids. Returns the line length including '\n', or 0 when there is no metric left.
size_t payload_to_frame(const RadioPayload& payload, char* out, size_t capacity, uint8_t* unknown_ids = 0);

}  // namespace telemetry
