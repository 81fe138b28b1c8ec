#include "payload_to_frame.h"

#include "frame_encoder.h"
#include "metric_ids.h"

namespace telemetry {

uint8_t node_source(uint8_t id, char out[kNodeSourceSize]) {
  uint8_t pos = 0;
  for (const char* s = "node"; *s; ++s) out[pos++] = *s;
  if (id >= 100) out[pos++] = static_cast<char>('0' + id / 100);
  if (id >= 10) out[pos++] = static_cast<char>('0' + id / 10 % 10);
  out[pos++] = static_cast<char>('0' + id % 10);
  out[pos] = '\0';
  return pos;
}

size_t payload_to_frame(const RadioPayload& payload, char* out, size_t capacity, uint8_t* unknown_ids) {
  char source[kNodeSourceSize];
  node_source(payload.node_id, source);

  Metric metrics[kPayloadMaxMetrics + 1];
  uint8_t count = 0, unknown = 0;
  for (uint8_t i = 0; i < payload.count && i < kPayloadMaxMetrics; ++i) {
    const MetricInfo* info = metric_info(payload.metrics[i].id);
    if (info == 0) {
      ++unknown;
      continue;
    }
    metrics[count].key = info->name;
    metrics[count].value.scaled = payload.metrics[i].scaled;
    metrics[count].value.decimals = info->decimals;
    ++count;
  }
  if (payload.vbat_mv != 0) {
    metrics[count].key = "vbat";
    metrics[count].value.scaled = payload.vbat_mv;
    metrics[count].value.decimals = 3;
    ++count;
  }
  if (unknown_ids) *unknown_ids = unknown;
  return encode_frame(out, capacity, source, payload.seq, metrics, count);
}

}  // namespace telemetry
