// Build-time settings of the sensor node. Override from make (`make NODE_ID=3 SAMPLE_SECONDS=300`) or edit here
// for the Arduino IDE / arduino-cli.
#pragma once

#ifndef NODE_ID
#define NODE_ID 1  // 1..6, unique per base station; the node's frames carry source "node<NODE_ID>"
#endif
// RF_CHANNEL, RF_ADDRESS_PREFIX (same on the base station), CE_PIN, CSN_PIN: defaults in the library's
// telemetry/radio_link.h.
#ifndef SIGNING
#define SIGNING 1  // 1: signed payloads v2 with the key and counter in EEPROM (PROTOCOL.md 8); 0: unsigned v1
#endif
#ifndef SAMPLE_SECONDS
#define SAMPLE_SECONDS 60  // seconds asleep between samples
#endif
#ifndef BANDGAP_MV
#define BANDGAP_MV 1100  // this chip's bandgap in mV; calibrate with a multimeter for +-1% vbat
#endif

// Analog inputs; -1 leaves a sensor out of this node.
#ifndef TEMP_IN_PIN
#define TEMP_IN_PIN A0
#endif
#ifndef TEMP_OUT_PIN
#define TEMP_OUT_PIN A1
#endif
#ifndef TEMP_CHECK_PIN
#define TEMP_CHECK_PIN -1
#endif
#ifndef LIGHT_PIN
#define LIGHT_PIN A2
#endif
#ifndef HUMIDITY_PIN
#define HUMIDITY_PIN A3
#endif
// Feeds the sensor dividers only while sampling, so they draw nothing during sleep.
#ifndef SENSOR_POWER_PIN
#define SENSOR_POWER_PIN 7
#endif
