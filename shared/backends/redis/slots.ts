/**
 * Redis Cluster's hash slots, as the servers compute them (cluster spec: CRC16-XMODEM of the key,
 * or of its hash tag, the text between the first `{` and the next `}` when that is not empty,
 * modulo 16384), and the per-slot tags sessions use to land on their provider's shard.
 */
export const SLOTS = 16384;

const CRC_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16-XMODEM (polynomial 0x1021, initial 0) of the key's UTF-8 bytes. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ CRC_TABLE[((crc >> 8) ^ b) & 0xff]!;
  return crc;
}

/** The hash slot of a key, hash tags included. */
export function hashSlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b); // {
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % SLOTS;
  }
  return crc16(bytes) % SLOTS;
}

let slotTags: string[] | null = null;

/**
 * A hash tag for every slot: `slotTag(s)` is the first of `s:0`, `s:1`, … (base 36) whose slot is
 * s. Deterministic, so every gateway and every release derives the same keys. Built on first use
 * (about 170,000 CRCs, a few milliseconds).
 */
export function slotTag(slot: number): string {
  if (slotTags === null) {
    const tags = new Array<string>(SLOTS);
    let missing = SLOTS;
    for (let n = 0; missing > 0; n++) {
      const tag = `s:${n.toString(36)}`;
      const s = crc16(Buffer.from(tag, 'latin1')) % SLOTS;
      if (tags[s] === undefined) {
        tags[s] = tag;
        missing--;
      }
    }
    slotTags = tags;
  }
  const tag = slotTags[slot];
  if (tag === undefined) throw new RangeError(`No hash slot ${slot}.`);
  return tag;
}
