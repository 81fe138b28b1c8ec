#include "frame_encoder.h"

#include <string.h>

#include "crc16_ccitt.h"

namespace telemetry {
namespace {

const uint64_t kMaxTimeMs = 999999999999999ULL;  // 15 digits
const uint8_t kMaxSourceLength = 32;
const uint8_t kMaxKeyLength = 16;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

bool valid_source(const char* s) {
  size_t n = 0;
  for (; s[n] != '\0'; ++n) {
    char c = s[n];
    if (n >= kMaxSourceLength || !(is_digit(c) || is_lower(c) || is_upper(c) || c == '_' || c == '-')) return false;
  }
  return n > 0;
}

bool valid_key(const char* k) {
  if (!is_lower(k[0]) || (k[1] == '\0' && k[0] == 't')) return false;
  for (size_t n = 1; k[n] != '\0'; ++n) {
    if (n >= kMaxKeyLength || !(is_digit(k[n]) || is_lower(k[n]) || k[n] == '_')) return false;
  }
  return true;
}

// Bounded writer: remembers overflow instead of checking every call site.
struct LineWriter {
  char* out;
  size_t limit;  // last usable index for text (before the NUL)
  size_t length;
  bool overflow;

  void put(char c) {
    if (length < limit) out[length++] = c;
    else overflow = true;
  }
  void put(const char* s) {
    while (*s) put(*s++);
  }
  void put_unsigned(uint32_t v) {
    char digits[10];
    uint8_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n) put(digits[--n]);
  }
};

bool begin(LineWriter& w, char* out, size_t capacity, const char* source, uint16_t seq) {
  w.out = out;
  w.length = 0;
  w.overflow = false;
  w.limit = capacity == 0 ? 0 : capacity - 1;
  if (w.limit > kFrameMaxLine + 1) w.limit = kFrameMaxLine + 1;
  if (capacity) out[0] = '\0';
  if (source == 0 || !valid_source(source)) return false;
  w.put("$T1,");
  w.put(source);
  w.put(',');
  w.put_unsigned(seq);
  return true;
}

void put_fixed(LineWriter& w, Fixed v) {
  uint32_t magnitude = v.scaled < 0 ? 0u - static_cast<uint32_t>(v.scaled) : static_cast<uint32_t>(v.scaled);
  char digits[kFixedMaxDecimals + 2];
  uint8_t n = 0;
  while (magnitude != 0 || n <= v.decimals) {  // at least one digit before the point
    digits[n++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  }
  if (v.scaled < 0) w.put('-');
  while (n) {
    if (n == v.decimals) w.put('.');
    w.put(digits[--n]);
  }
}

bool put_metrics(LineWriter& w, const Metric* metrics, uint8_t count) {
  if (metrics == 0 || count == 0) return false;
  for (uint8_t i = 0; i < count; ++i) {
    const Metric& m = metrics[i];
    if (m.key == 0 || !valid_key(m.key) || m.value.decimals > kFixedMaxDecimals) return false;
    for (uint8_t j = 0; j < i; ++j) {
      if (strcmp(metrics[j].key, m.key) == 0) return false;
    }
    w.put(',');
    w.put(m.key);
    w.put('=');
    put_fixed(w, m.value);
  }
  return true;
}

size_t finish(LineWriter& w) {
  static const char kHex[] = "0123456789ABCDEF";
  uint16_t crc = crc16_ccitt(w.out + 1, w.length - 1);
  w.put('*');
  for (int shift = 12; shift >= 0; shift -= 4) w.put(kHex[(crc >> shift) & 0xF]);
  w.put('\n');
  if (w.overflow) {
    w.out[0] = '\0';
    return 0;
  }
  w.out[w.length] = '\0';
  return w.length;
}

size_t fail(char* out, size_t capacity) {
  if (capacity) out[0] = '\0';
  return 0;
}

}  // namespace

size_t encode_frame(char* out, size_t capacity, const char* source, uint16_t seq, const Metric* metrics,
                    uint8_t count) {
  LineWriter w;
  if (!begin(w, out, capacity, source, seq) || !put_metrics(w, metrics, count)) return fail(out, capacity);
  return finish(w);
}

size_t encode_frame_with_time(char* out, size_t capacity, const char* source, uint16_t seq, uint64_t t_ms,
                              const Metric* metrics, uint8_t count) {
  LineWriter w;
  if (t_ms > kMaxTimeMs || !begin(w, out, capacity, source, seq)) return fail(out, capacity);
  // Split into two 32-bit halves of at most 8 and 7 digits.
  const uint32_t kSplit = 10000000UL;
  uint32_t high = static_cast<uint32_t>(t_ms / kSplit);
  uint32_t low = static_cast<uint32_t>(t_ms % kSplit);
  w.put(",t=");
  if (high != 0) {
    w.put_unsigned(high);
    for (uint32_t p = kSplit / 10; p > 1 && low < p; p /= 10) w.put('0');
  }
  w.put_unsigned(low);
  if (!put_metrics(w, metrics, count)) return fail(out, capacity);
  return finish(w);
}

}  // namespace telemetry
