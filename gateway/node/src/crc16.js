// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor): firmware/protocol/PROTOCOL.md
// section 1. The check value of "123456789" is 0x29B1.

const TABLE = new Uint16Array(256);
for (let byte = 0; byte < 256; byte++) {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  TABLE[byte] = crc;
}

/** CRC of `data`: a Uint8Array/Buffer, or a string holding one byte per character (latin-1). */
export function crc16CcittFalse(data) {
  let crc = 0xffff;
  if (typeof data === 'string') {
    for (let i = 0; i < data.length; i++) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ data.charCodeAt(i)) & 0xff];
  } else {
    for (let i = 0; i < data.length; i++) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ data[i]) & 0xff];
  }
  return crc;
}

/** The CRC as a frame carries it: 4 uppercase hex digits. */
export function crcHex(crc) {
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
