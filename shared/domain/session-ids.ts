import { randomBytes } from 'node:crypto';

/**
 * ASP.NET session ids (docs/protocol.md §Sessions): 24 characters of [a-z0-5], 5 bits each, 120
 * random bits. A store may stamp a 15-bit number into the last three characters (the scale-out
 * mode puts the provider's Redis hash slot there, so that a session lives on its provider's shard);
 * such an id keeps the format and 105 random bits.
 */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz012345';
const SESSION_ID_RE = /^[a-z0-5]{24}$/;
const STAMP_CHARS = 3;
/** The largest number a stamp holds (15 bits). */
export const MAX_SESSION_STAMP = 2 ** (5 * STAMP_CHARS) - 1;

export function newSessionId(): string {
  const bytes = randomBytes(15);
  let id = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      id += ALPHABET.charAt((acc >> bits) & 31);
    }
  }
  return id;
}

export function isSessionId(value: string | null): value is string {
  return value !== null && SESSION_ID_RE.test(value);
}

/** `id` with `stamp` (0..MAX_SESSION_STAMP) in its last three characters. */
export function stampSessionId(id: string, stamp: number): string {
  if (!isSessionId(id)) throw new RangeError('Not a session id.');
  if (!Number.isInteger(stamp) || stamp < 0 || stamp > MAX_SESSION_STAMP) throw new RangeError(`Session stamp out of range: ${stamp}`);
  let tail = '';
  for (let i = STAMP_CHARS - 1; i >= 0; i--) tail += ALPHABET.charAt((stamp >> (5 * i)) & 31);
  return id.slice(0, -STAMP_CHARS) + tail;
}

/** The number in the last three characters of a session id (whatever put it there). */
export function sessionIdStamp(id: string): number {
  let stamp = 0;
  for (let i = id.length - STAMP_CHARS; i < id.length; i++) stamp = (stamp << 5) | ALPHABET.indexOf(id.charAt(i));
  return stamp;
}
