// Redis Cluster's key → slot mapping (CLUSTER KEYSLOT): CRC16/XMODEM of the key, or of its hash tag (the part
// between the first `{` and the next `}`, when not empty), modulo 16384.
function crc16(data: Buffer): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(Buffer.from(key.slice(open + 1, close))) % 16384;
  }
  return crc16(Buffer.from(key)) % 16384;
}
