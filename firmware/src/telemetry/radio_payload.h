// Radio payload v1: the binary record a sensor node sends over nRF24L01+ (PROTOCOL.md section 6). Little-endian,
// at most 32 bytes (one nRF24 packet), sent with dynamic payload length.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace telemetry {

const uint8_t kPayloadVersion = 1;
const uint8_t kPayloadHeaderSize = 8;
const uint8_t kPayloadMetricSize = 3;  // id + int16
const uint8_t kPayloadMaxMetrics = 8;
const uint8_t kPayloadMaxSize = kPayloadHeaderSize + kPayloadMaxMetrics * kPayloadMetricSize;  // 32

struct PayloadMetric {
  uint8_t id;      // MetricId; 0 is never valid
  int16_t scaled;  // value x 10^decimals of the id (metric_ids.h)
};

struct RadioPayload {
  uint8_t node_id;     // 1-254
  uint16_t seq;        // +1 per sample, wrapping; becomes the frame's seq
  uint16_t vbat_mv;    // supply voltage in mV, 0 = not measured
  uint8_t send_failures;  // failed sends since boot, saturating at 255
  uint8_t count;
  PayloadMetric metrics[kPayloadMaxMetrics];
};

enum PayloadError : uint8_t {
  kPayloadOk = 0,
  kPayloadTooShort,     // shorter than the header
  kPayloadBadVersion,   // first byte is not kPayloadVersion
  kPayloadBadNode,      // node id 0 or 255
  kPayloadBadLength,    // length disagrees with the metric count, or count > 8
  kPayloadBadMetricId,  // metric id 0
  kPayloadDuplicateId,  // a metric id twice
};

// Appends a metric; false when the payload is full or the id is 0 or already present.
bool payload_add(RadioPayload& payload, uint8_t id, int16_t scaled);

// Serialises into out (at least kPayloadMaxSize bytes); returns the byte count, or 0 if the payload is invalid.
uint8_t payload_encode(const RadioPayload& payload, uint8_t* out);

PayloadError payload_decode(const uint8_t* data, uint8_t length, RadioPayload& out);

// Shared with payload v2 (signed_payload.h), which carries the same metric records.
PayloadError payload_check(const RadioPayload& payload);  // node id, metric ids, count <= kPayloadMaxMetrics
uint8_t* payload_put_metrics(const RadioPayload& payload, uint8_t* out);  // returns the end of the records
void payload_get_metrics(const uint8_t* records, RadioPayload& out);  // reads out.count records

}  // namespace telemetry
