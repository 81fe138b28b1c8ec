// Battery sensor node: wake, sample, send one radio payload, power the radio down, sleep (power-down, watchdog).
#include "node_config.h"  // first: its settings win over library defaults
#include <SPI.h>
#include <RF24.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <TelemetryNode.h>
#if SIGNING
#include "signing.h"
#include "provisioning.h"
#endif

using namespace telemetry;

static_assert(NODE_ID >= 1 && NODE_ID <= 6, "NODE_ID must be 1..6 (one nRF24 pipe per node on the base station)");
static_assert(SAMPLE_SECONDS >= 1, "SAMPLE_SECONDS must be at least 1");

RF24 radio(CE_PIN, CSN_PIN);
bool radio_ok = false;
uint16_t seq = 0;
uint8_t send_failures = 0;
volatile bool watchdog_fired = false;

ISR(WDT_vect) { watchdog_fired = true; }

// One power-down sleep of a watchdog period (WDTO_1S .. WDTO_8S). avr-libc's wdt_enable does the timed
// sequence; WDIE on top makes the first timeout an interrupt (wake-up) and a second one a reset (hang guard).
void sleep_watchdog_period(uint8_t wdto) {
  byte adc = ADCSRA;
  ADCSRA = 0;  // the ADC would draw ~250 uA through the sleep
  MCUSR &= ~_BV(WDRF);
  cli();
  watchdog_fired = false;
  wdt_enable(wdto);
  WDTCSR |= _BV(WDIE);
  set_sleep_mode(SLEEP_MODE_PWR_DOWN);
  sleep_enable();
  while (!watchdog_fired) {  // other interrupts may wake the CPU; only the watchdog ends the period
    sleep_bod_disable();
    sei();
    sleep_cpu();
    cli();
  }
  sleep_disable();
  wdt_disable();
  sei();
  ADCSRA = adc;
}

void sleep_seconds(uint16_t seconds) {
  static const uint8_t kPeriods[] = {WDTO_8S, WDTO_4S, WDTO_2S, WDTO_1S};
  static const uint8_t kLengths[] = {8, 4, 2, 1};
  for (uint8_t i = 0; i < 4; ++i) {
    while (seconds >= kLengths[i]) {
      sleep_watchdog_period(kPeriods[i]);
      seconds -= kLengths[i];
    }
  }
}

// Supply voltage: the 1.1 V bandgap measured against AVcc (no pin needed).
uint16_t read_vcc_millivolts() {
  ADMUX = _BV(REFS0) | _BV(MUX3) | _BV(MUX2) | _BV(MUX1);
  delay(2);  // the reference settles after switching the mux
  uint16_t adc = 0;
  for (uint8_t i = 0; i < 2; ++i) {  // the first conversion after a mux change is discarded
    ADCSRA |= _BV(ADSC);
    while (bit_is_set(ADCSRA, ADSC)) {
    }
    adc = ADC;
  }
  return supply_millivolts(adc, BANDGAP_MV);
}

void add_temperature(RadioPayload& payload, int pin, uint8_t id, float* celsius_out = nullptr) {
  float celsius;
  int16_t scaled;
  if (pin < 0 || !ntc_celsius(analogRead(pin), kDivider10kToGround, kNtc10k3950, celsius)) return;
  if (metric_scaled(id, celsius, scaled)) payload_add(payload, id, scaled);
  if (celsius_out) *celsius_out = celsius;
}

void sample(RadioPayload& payload) {
  payload.vbat_mv = read_vcc_millivolts();
  digitalWrite(SENSOR_POWER_PIN, HIGH);
  delay(5);
  float celsius = 25.0f;  // humidity compensation when temp_in is missing
  add_temperature(payload, TEMP_IN_PIN, kMetricTempIn, &celsius);
  add_temperature(payload, TEMP_OUT_PIN, kMetricTempOut);
  add_temperature(payload, TEMP_CHECK_PIN, kMetricTempCheck);
  int16_t scaled;
  float rh;
  if (HUMIDITY_PIN >= 0 && humidity_percent(analogRead(HUMIDITY_PIN), celsius, rh) &&
      metric_scaled(kMetricHumidity, rh, scaled)) {
    payload_add(payload, kMetricHumidity, scaled);
  }
  if (LIGHT_PIN >= 0) payload_add(payload, kMetricLight, light_percent(analogRead(LIGHT_PIN), true));
  digitalWrite(SENSOR_POWER_PIN, LOW);
}

bool start_radio() {
  if (!begin_radio_link(radio, RF24_250KBPS, RF24_PA_MAX)) return false;
  radio.openWritingPipe(node_address(RF_ADDRESS_PREFIX, NODE_ID));
  radio.stopListening();
  radio.powerDown();
  return true;
}

bool send(const RadioPayload& payload) {
  uint8_t bytes[kPayloadMaxSize];
#if SIGNING
  uint8_t length = signing::encode(payload, bytes);
#else
  uint8_t length = payload_encode(payload, bytes);
#endif
  if (length == 0) return false;
  if (!radio_ok) radio_ok = start_radio();  // a radio plugged in later is picked up
  if (!radio_ok) return false;
  radio.powerUp();
  bool acked = radio.write(bytes, length);
  radio.powerDown();
  return acked;
}

void setup() {
  Serial.begin(115200);
  pinMode(SENSOR_POWER_PIN, OUTPUT);
  Serial.print(F("# boot sensor_node node="));
  Serial.print(NODE_ID);
  Serial.print(F(" channel="));
  Serial.print(RF_CHANNEL);
  Serial.print(F(" sample_s="));
#if SIGNING
  Serial.print(SAMPLE_SECONDS);
  signing::load();
  Serial.println(signing::has_key ? F(" payload=v2") : F(" payload=v2 key=none"));
  if (provisioning::listen()) signing::load();
#else
  Serial.println(SAMPLE_SECONDS);
#endif
  radio_ok = start_radio();
  Serial.println(radio_ok ? F("# radio ok") : F("# radio missing"));
}

void loop() {
  RadioPayload payload = {};
  payload.node_id = NODE_ID;
  payload.seq = seq++;
  payload.send_failures = send_failures;
  sample(payload);
#if SIGNING
  if (!signing::has_key) {  // nothing goes on the air unsigned: the gateway would reject it; say why here instead
    Serial.print(F("# no key: run firmware/scripts/provision PORT "));
    Serial.print(NODE_ID);
    Serial.println(F(" --keys KEYS_FILE"));
    Serial.flush();
    sleep_seconds(SAMPLE_SECONDS);
    return;
  }
#endif
  bool acked = send(payload);
  if (!acked && send_failures < 255) ++send_failures;
  // A short line per sample for someone with a USB cable at the node; costs ~1 ms awake.
  Serial.print(F("# sent seq="));
  Serial.print(payload.seq);
  Serial.print(F(" metrics="));
  Serial.print(payload.count);
  Serial.print(F(" vbat_mv="));
  Serial.print(payload.vbat_mv);
  Serial.print(acked ? F(" ack=yes") : F(" ack=no"));
  Serial.print(F(" failures="));
#if SIGNING
  Serial.print(send_failures);
  Serial.print(F(" counter="));
  if (signing::signed_last) {
    Serial.println(signing::last_counter);
  } else {
    Serial.println(F("none"));  // counters exhausted or the reservation not stored: nothing sent
  }
#else
  Serial.println(send_failures);
#endif
  Serial.flush();  // power-down would cut the line short
  sleep_seconds(SAMPLE_SECONDS);
}
