/** CRC16-CCITT (XMODEM) by table, as Redis Cluster hashes keys. */
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

/**
 * The Redis Cluster hash slot of `key`: of its hash tag (the text between the first `{` and the next
 * `}`, when not empty), else of the whole key. Lets a writer see, from the cluster's slot map, which
 * master a key lives on before it writes.
 */
export function keySlot(key: string): number {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed, "utf8")) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % 16384;
}
