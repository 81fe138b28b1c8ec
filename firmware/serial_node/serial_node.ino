// Radio-less room board on USB power: samples an NTC thermistor and a photoresistor and prints v1 frames.
#include "serial_node_config.h"  // first: its settings win over library defaults
#include <TelemetryNode.h>

using namespace telemetry;

uint16_t seq = 0;
unsigned long last_sample_ms = 0;

// Appends a reading under the id's frame name and scale; a value the id cannot carry is left out.
void add_metric(Metric* metrics, uint8_t& count, uint8_t id, float value) {
  const MetricInfo* info = metric_info(id);
  int16_t scaled;
  if (info == nullptr || !metric_scaled(id, value, scaled)) return;
  metrics[count].key = info->name;
  metrics[count].value.scaled = scaled;
  metrics[count].value.decimals = info->decimals;
  ++count;
}

void sample_and_print() {
  Metric metrics[2];
  uint8_t count = 0;
  float celsius;
  if (ntc_celsius(analogRead(TEMP_PIN), kDivider10kToGround, kNtc10k3950, celsius)) {
    add_metric(metrics, count, kMetricTemp, celsius);
  }
  add_metric(metrics, count, kMetricLight, light_percent(analogRead(LIGHT_PIN), true));
  char line[kFrameBufferSize];
  size_t n = encode_frame(line, sizeof line, SOURCE_NAME, seq, metrics, count);
  if (n == 0) {
    Serial.println(F("# encode failed"));
    return;
  }
  Serial.write(line, n);
  ++seq;
}

void setup() {
  Serial.begin(115200);
  Serial.print(F("# boot serial_node source=" SOURCE_NAME " sample_s="));
  Serial.println(SAMPLE_SECONDS);
  sample_and_print();
  last_sample_ms = millis();
}

void loop() {
  if (millis() - last_sample_ms >= SAMPLE_SECONDS * 1000UL) {
    last_sample_ms += SAMPLE_SECONDS * 1000UL;
    sample_and_print();
  }
}
