// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor): the v1 frame checksum.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace telemetry {

const uint16_t kCrc16Init = 0xFFFF;

uint16_t crc16_ccitt_update(uint16_t crc, uint8_t byte);
uint16_t crc16_ccitt(const void* data, size_t length, uint16_t crc = kCrc16Init);

}  // namespace telemetry
