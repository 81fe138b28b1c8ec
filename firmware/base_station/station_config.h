// Build-time settings of the base station (`make RF_CHANNEL=90 STATUS_SECONDS=30`, or edit here).
#pragma once

// RF_CHANNEL, RF_ADDRESS_PREFIX (same on the nodes), CE_PIN, CSN_PIN: defaults in the library's
// telemetry/radio_link.h.
#ifndef STATUS_SECONDS
#define STATUS_SECONDS 10  // period of the "# stats" line; a missing radio is retried at the same period
#endif
