#include "signed_payload.h"

#include <string.h>

#include "le_bytes.h"

namespace telemetry {

uint8_t signed_payload_encode(const RadioPayload& p, uint32_t counter, const hmac_sha256_key& key, uint8_t* out) {
  if (p.count > kSignedMaxMetrics || payload_check(p) != kPayloadOk) return 0;
  out[0] = kSignedPayloadVersion;
  out[1] = p.node_id;
  put_le16(out + 2, p.seq);
  put_le32(out + 4, counter);
  put_le16(out + 8, p.vbat_mv);
  out[10] = p.send_failures;
  uint8_t length = static_cast<uint8_t>(payload_put_metrics(p, out + kSignedHeaderSize) - out);
  uint8_t mac[SHA256_DIGEST_SIZE];
  hmac_sha256_prepared(&key, out, length, mac);
  memcpy(out + length, mac, kTagSize);
  return static_cast<uint8_t>(length + kTagSize);
}

uint8_t signed_payload_encode(const RadioPayload& p, uint32_t counter, const uint8_t key[kKeySize], uint8_t* out) {
  hmac_sha256_key prepared;
  hmac_sha256_prepare(&prepared, key, kKeySize);
  return signed_payload_encode(p, counter, prepared, out);
}

PayloadError signed_payload_decode(const uint8_t* data, uint8_t length, RadioPayload& out, uint32_t& counter) {
  out.count = 0;
  if (length < kSignedMinSize) return kPayloadTooShort;
  if (data[0] != kSignedPayloadVersion) return kPayloadBadVersion;
  if (length > kSignedMaxSize || (length - kSignedMinSize) % kPayloadMetricSize != 0) return kPayloadBadLength;
  out.node_id = data[1];
  out.seq = get_le16(data + 2);
  counter = get_le32(data + 4);
  out.vbat_mv = get_le16(data + 8);
  out.send_failures = data[10];
  out.count = static_cast<uint8_t>((length - kSignedMinSize) / kPayloadMetricSize);
  payload_get_metrics(data + kSignedHeaderSize, out);
  return payload_check(out);
}

bool key_provisioned(const uint8_t key[kKeySize]) {
  for (uint8_t i = 0; i < kKeySize; ++i) {
    if (key[i] != 0xFF) return true;
  }
  return false;
}

}  // namespace telemetry
