// Build-time settings of the radio-less room board (`make SOURCE_NAME=room2 SAMPLE_SECONDS=10`, or edit here).
#pragma once

#ifndef SOURCE_NAME
#define SOURCE_NAME "room"  // the frame's source: [A-Za-z0-9_-]{1,32}
#endif
#ifndef SAMPLE_SECONDS
#define SAMPLE_SECONDS 5
#endif
#ifndef TEMP_PIN
#define TEMP_PIN A0  // NTC thermistor divider
#endif
#ifndef LIGHT_PIN
#define LIGHT_PIN A1  // photoresistor divider
#endif
