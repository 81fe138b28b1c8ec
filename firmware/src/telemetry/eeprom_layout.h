/* The sensor node's EEPROM (PROTOCOL.md section 8.4). Plain C, for the sketch, the host tools and the C radio
   simulator, which provisions simulated nodes the way `make upload KEY_FILE=` provisions real ones. */
#pragma once

#define TELEMETRY_EEPROM_KEY_OFFSET 0          /* 16 bytes; all FF (erased) = no key provisioned */
#define TELEMETRY_EEPROM_KEY_SIZE 16
#define TELEMETRY_EEPROM_RESERVATION_OFFSET 16 /* uint32 little-endian; FFFFFFFF (erased) = 0 */
#define TELEMETRY_EEPROM_RESERVATION_SIZE 4
