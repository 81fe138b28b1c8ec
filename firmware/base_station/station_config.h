// Build-time settings of the base station (`make RF_CHANNEL=90 STATUS_SECONDS=30`, or edit here).
#pragma once

#ifndef RF_CHANNEL
#define RF_CHANNEL 76  // same as the nodes
#endif
#ifndef RF_ADDRESS_PREFIX
#define RF_ADDRESS_PREFIX 0x54454C45UL  // same as the nodes
#endif
#ifndef STATUS_SECONDS
#define STATUS_SECONDS 10  // period of the "# stats" line; a missing radio is retried at the same period
#endif
#ifndef CE_PIN
#define CE_PIN 9
#endif
#ifndef CSN_PIN
#define CSN_PIN 10
#endif
