#include "payload_to_frame.h"

#include "frame_encoder.h"
#include "metric_ids.h"

namespace telemetry {

size_t payload_to_frame(const RadioPayload& payload, char* out, size_t capacity, uint8_t* unknown_ids) {
  char source[8] = "node";  // "node" + up to 3 digits
  uint8_t id = payload.node_id, pos = 4;
  if (id >= 100) source[pos++] = static_cast<char>('0' + id / 100);
  if (id >= 10) source[pos++] = static_cast<char>('0' + id / 10 % 10);
  source[pos++] = static_cast<char>('0' + id % 10);
  source[pos] = '\0';

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
