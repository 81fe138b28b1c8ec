#include "radio_payload.h"

#include "le_bytes.h"

namespace telemetry {
namespace {

bool has_id(const RadioPayload& payload, uint8_t count, uint8_t id) {
  for (uint8_t i = 0; i < count; ++i) {
    if (payload.metrics[i].id == id) return true;
  }
  return false;
}

}  // namespace

PayloadError payload_check(const RadioPayload& p) {
  if (p.node_id == 0 || p.node_id == 255) return kPayloadBadNode;
  if (p.count > kPayloadMaxMetrics) return kPayloadBadLength;
  for (uint8_t i = 0; i < p.count; ++i) {
    if (p.metrics[i].id == 0) return kPayloadBadMetricId;
    if (has_id(p, i, p.metrics[i].id)) return kPayloadDuplicateId;
  }
  return kPayloadOk;
}

uint8_t* payload_put_metrics(const RadioPayload& p, uint8_t* out) {
  for (uint8_t i = 0; i < p.count; ++i, out += kPayloadMetricSize) {
    out[0] = p.metrics[i].id;
    put_le16(out + 1, static_cast<uint16_t>(p.metrics[i].scaled));
  }
  return out;
}

void payload_get_metrics(const uint8_t* records, RadioPayload& out) {
  for (uint8_t i = 0; i < out.count; ++i, records += kPayloadMetricSize) {
    out.metrics[i].id = records[0];
    out.metrics[i].scaled = static_cast<int16_t>(get_le16(records + 1));
  }
}

bool payload_add(RadioPayload& payload, uint8_t id, int16_t scaled) {
  if (id == 0 || payload.count >= kPayloadMaxMetrics || has_id(payload, payload.count, id)) return false;
  payload.metrics[payload.count].id = id;
  payload.metrics[payload.count].scaled = scaled;
  ++payload.count;
  return true;
}

uint8_t payload_encode(const RadioPayload& p, uint8_t* out) {
  if (payload_check(p) != kPayloadOk) return 0;
  out[0] = kPayloadVersion;
  out[1] = p.node_id;
  put_le16(out + 2, p.seq);
  put_le16(out + 4, p.vbat_mv);
  out[6] = p.send_failures;
  out[7] = p.count;
  return static_cast<uint8_t>(payload_put_metrics(p, out + kPayloadHeaderSize) - out);
}

PayloadError payload_decode(const uint8_t* data, uint8_t length, RadioPayload& out) {
  if (length < kPayloadHeaderSize) return kPayloadTooShort;
  if (data[0] != kPayloadVersion) return kPayloadBadVersion;
  out.node_id = data[1];
  out.seq = get_le16(data + 2);
  out.vbat_mv = get_le16(data + 4);
  out.send_failures = data[6];
  out.count = data[7];
  if (out.count > kPayloadMaxMetrics || length != kPayloadHeaderSize + out.count * kPayloadMetricSize) {
    out.count = 0;
    return kPayloadBadLength;
  }
  payload_get_metrics(data + kPayloadHeaderSize, out);
  return payload_check(out);
}

}  // namespace telemetry
