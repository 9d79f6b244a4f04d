/**
 * Extreme and hostile values the mutators draw from. Text values are Unicode strings: the
 * renderers escape them for XML or percent-encode them for forms; raw byte sequences that no
 * string can carry (invalid UTF-8) live in BAD_BYTES and are spliced into encoded bodies.
 */
import type { Rng } from './prng.js';

/** Dates: .NET's DateTime range edges, offsets that push them out, years JS Date accepts but .NET does not. */
export const EXTREME_DATES = [
  '275760-09-14T00:00:00Z',
  '-271821-04-20T00:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00',
  '0000-12-31T23:59:59Z',
  '9999-12-31T23:59:59-14:00',
  '9999-12-31T23:59:59.9999999Z',
  '9999-12-31T23:59:59.99999999Z',
  '10000-01-01T00:00:00Z',
  '2026-02-29T00:00:00Z',
  '2024-02-29T24:00:00Z',
  '2026-11-22T08:59:60Z',
  '2026-11-22T08:59:30+14:01',
  '2026-11-22T08:59:30-99:99',
  '2026-11-22T08:59:30.12345678901234567890Z',
  '2026-11-22 08:59:30',
  '2026-11-22',
  '20261122T085930Z',
  ' 2026-11-22T08:59:30Z ',
  '+2026-11-22T08:59:30Z',
  '1e10',
  '',
];

/** The edges of what every store can hold: .NET's DateTime range after the offset, JS Date's limits. */
export const RANGE_EDGE_DATES = [
  '275760-09-14T00:00:00Z',
  '-271821-04-20T00:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '0001-01-01T00:59:59+01:00',
  '0001-01-01T00:00:00-01:00',
  '9999-12-31T23:59:59-14:00',
  '9999-12-31T23:00:00-01:00',
  '9999-12-31T23:59:59+14:00',
  '10000-01-01T00:00:00Z',
  '0000-01-01T00:00:00Z',
];

export const EXTREME_NUMBERS = [
  '1e309',
  '-1e309',
  '1.7976931348623157e308',
  '4.9e-324',
  '1e-400',
  'NaN',
  'nan',
  '-0',
  'INF',
  '-INF',
  '+INF',
  'Infinity',
  '1,234.5',
  '1.234,5',
  '0x1A',
  ' 42 ',
  '+.5',
  '.',
  '-',
  '1e',
  '٣٤',
  '2147483647',
  '2147483648',
  '-2147483649',
  '99999999999999999999999',
  '',
];

export const EXTREME_INTS = ['2147483647', '2147483648', '-2147483648', '-1', '0', '00001', '+1', ' 1 ', '1.0', '1e3', 'NaN', ''];
export const EXTREME_BOOLEANS = ['true', 'false', 'True', 'FALSE', '1', '0', ' true ', 'yes', ''];

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');

/** Strings a provider might send, some of them against every rule. */
export function hostileString(rng: Rng): string {
  switch (rng.int(14)) {
    case 0:
      return 'x'.repeat(rng.pick([31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 2048, 2049, 8192, 8193]));
    case 1:
      return 'Ñ'.repeat(rng.pick([32, 33, 64, 65, 256, 257]));
    case 2:
      return '😀'.repeat(rng.pick([16, 17, 32, 33, 64, 65]));
    case 3:
      return C0.slice(rng.int(32), 32);
    case 4:
      return `A${String.fromCharCode(0xd800 + rng.int(0x800))}B`;
    case 5:
      return rng.pick(['\ufffe', '\uffff', '\ufeff', '\u0085', '\u2028', '\u0000']);
    case 6:
      return rng.pick(['<![CDATA[x]]>', ']]>', '<x/>', '&amp;', '&#0;', '"\'<>&']);
    case 7:
      return rng.pick(['', ' ', '\t', '\r\n']);
    case 8:
      return 'y'.repeat(hugeLength(rng));
    case 9:
      return rng.pick(EXTREME_DATES);
    case 10:
      return rng.pick(EXTREME_NUMBERS);
    case 11:
      return "Robert'); DROP TABLE events;--";
    case 12:
      return '\u202eDCBA\u202c';
    default:
      return String.fromCodePoint(rng.pick([0x10ffff, 0x1f600, 0xe000, 0x7f, 0x80, 0x9f]));
  }
}

/** Lengths for huge values: mostly within the body limit, now and then past it (a 10^6-char value). */
export function hugeLength(rng: Rng): number {
  return rng.weighted([
    [6, 1_000],
    [3, 10_000],
    [1, 100_000],
    [1, 1_000_000],
  ]);
}

/** Byte sequences that are not valid UTF-8 (or valid only in encodings we do not declare). */
export const BAD_BYTES: readonly Buffer[] = [
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0xc0, 0xbc]), // overlong '<'
  Buffer.from([0xe0, 0x80, 0xbc]), // overlong '<', three bytes
  Buffer.from([0xed, 0xa0, 0x80]), // CESU-8 high surrogate
  Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]), // CESU-8 pair (😀)
  Buffer.from([0xc3]), // truncated two-byte sequence
  Buffer.from([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
  Buffer.from([0xe9]), // é in ISO-8859-1
  Buffer.from([0x00]),
  Buffer.from([0x01, 0x1b]),
  Buffer.from([0xef, 0xbf, 0xbe]), // U+FFFE, valid UTF-8 but not an XML char
];

/** One value for a scalar field of the given type, mostly extreme. */
export function extremeFor(rng: Rng, type: string): string {
  if (rng.chance(0.25)) return hostileString(rng);
  switch (type) {
    case 'dateTime':
      return rng.pick(rng.chance(0.5) ? RANGE_EDGE_DATES : EXTREME_DATES);
    case 'double':
      return rng.pick(EXTREME_NUMBERS);
    case 'int':
      return rng.pick(EXTREME_INTS);
    case 'boolean':
      return rng.pick(EXTREME_BOOLEANS);
    default:
      return hostileString(rng);
  }
}
