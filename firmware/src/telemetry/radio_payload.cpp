#include "radio_payload.h"

namespace telemetry {
namespace {

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xFF);
  p[1] = static_cast<uint8_t>(v >> 8);
}

uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8)); }

bool has_id(const RadioPayload& payload, uint8_t count, uint8_t id) {
  for (uint8_t i = 0; i < count; ++i) {
    if (payload.metrics[i].id == id) return true;
  }
  return false;
}

PayloadError check(const RadioPayload& p) {
  if (p.node_id == 0 || p.node_id == 255) return kPayloadBadNode;
  if (p.count > kPayloadMaxMetrics) return kPayloadBadLength;
  for (uint8_t i = 0; i < p.count; ++i) {
    if (p.metrics[i].id == 0) return kPayloadBadMetricId;
    if (has_id(p, i, p.metrics[i].id)) return kPayloadDuplicateId;
  }
  return kPayloadOk;
}

}  // namespace

bool payload_add(RadioPayload& payload, uint8_t id, int16_t scaled) {
  if (id == 0 || payload.count >= kPayloadMaxMetrics || has_id(payload, payload.count, id)) return false;
  payload.metrics[payload.count].id = id;
  payload.metrics[payload.count].scaled = scaled;
  ++payload.count;
  return true;
}

uint8_t payload_encode(const RadioPayload& p, uint8_t* out) {
  if (check(p) != kPayloadOk) return 0;
  out[0] = kPayloadVersion;
  out[1] = p.node_id;
  put16(out + 2, p.seq);
  put16(out + 4, p.vbat_mv);
  out[6] = p.send_failures;
  out[7] = p.count;
  uint8_t* m = out + kPayloadHeaderSize;
  for (uint8_t i = 0; i < p.count; ++i, m += kPayloadMetricSize) {
    m[0] = p.metrics[i].id;
    put16(m + 1, static_cast<uint16_t>(p.metrics[i].scaled));
  }
  return static_cast<uint8_t>(m - out);
}

PayloadError payload_decode(const uint8_t* data, uint8_t length, RadioPayload& out) {
  if (length < kPayloadHeaderSize) return kPayloadTooShort;
  if (data[0] != kPayloadVersion) return kPayloadBadVersion;
  out.node_id = data[1];
  out.seq = get16(data + 2);
  out.vbat_mv = get16(data + 4);
  out.send_failures = data[6];
  out.count = data[7];
  if (out.count > kPayloadMaxMetrics || length != kPayloadHeaderSize + out.count * kPayloadMetricSize) {
    out.count = 0;
    return kPayloadBadLength;
  }
  const uint8_t* m = data + kPayloadHeaderSize;
  for (uint8_t i = 0; i < out.count; ++i, m += kPayloadMetricSize) {
    out.metrics[i].id = m[0];
    out.metrics[i].scaled = static_cast<int16_t>(get16(m + 1));
  }
  return check(out);
}

}  // namespace telemetry
