/**
 * dedupeKey (gateway/service/dedupe-key.ts) writes an event's identity into a reused buffer; the
 * reference is the template string it replaced, hashed as UTF-8. Keys already stored depend on
 * these bytes, so they must be the same for any text: ASCII, accents, astral characters, lone
 * surrogates, empty fields, long ones that outgrow the buffer, every kind of double.
 */
import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dedupeKey } from '../../../../gateway/service/dedupe-key.js';

function reference(u: string, d: string, s: string, c: string, ms: number, ticks: number, lat: number, lon: number): string {
  return hash('sha256', `${u}\0${d}\0${s}\0${c}\0${ms}.${ticks}\0${lat}\0${lon}`, 'base64');
}

const TEXTS = ['', 'AB123CD', 'prestador-1', 'ñandú', 'Ünïcødé ✓', '🚚🚛', '\ud800', 'x\udc00y', '\ud83d', 'a\u0000b', 'é'.repeat(700), 'z'.repeat(3000)];
const NUMBERS = [0, -0, -34.6, -58.38, 1e-300, -Number.MIN_VALUE, Number.MAX_VALUE, 0.1 + 0.2, 179.99999999999997, 90, 1e21, 123456789.125, 1e-7, -1.5e-7, NaN, Infinity, -Infinity];
/** Event times: the integers are written digit by digit, anything else as String() writes it. */
const TIMES = [0, 1, 9, 10, 1764072000123, -1, -62135596800000, 253402300799999, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 1e21, 0.5, -0, NaN];

describe('dedupeKey', () => {
  it('is the SHA-256 of the identity template, for every kind of text and number', () => {
    let x = 7;
    const pick = <T>(list: readonly T[]): T => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return list[x % list.length]!;
    };
    for (let i = 0; i < 20_000; i++) {
      const args = [pick(TEXTS), pick(TEXTS), pick(TEXTS), pick(TEXTS), pick(TIMES), pick([0, 1, 9999, 42, 10, 100]), pick(NUMBERS), pick(NUMBERS)] as const;
      expect(dedupeKey(...args), JSON.stringify(args)).toBe(reference(...args));
    }
  });

  it('is the same for random positions and times (JSON.stringify and the digit writer against String)', () => {
    let x = 11;
    const random = (): number => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x / 2 ** 32;
    };
    for (let i = 0; i < 50_000; i++) {
      // Positions with 1 to 15 decimals, times anywhere in ±9,999 years, ticks 0-9999.
      const decimals = 1 + Math.floor(random() * 15);
      const lat = Math.round((random() * 180 - 90) * 10 ** decimals) / 10 ** decimals;
      const lon = (random() - 0.5) * 360;
      const ms = Math.round((random() - 0.5) * 2 * 315537897599999);
      const ticks = Math.floor(random() * 10_000);
      expect(dedupeKey('u', 'd', 's', 'c', ms, ticks, lat, lon)).toBe(reference('u', 'd', 's', 'c', ms, ticks, lat, lon));
    }
  });

  it('tells events apart by each part of the identity', () => {
    const base = ['u', 'd', 's', 'c', 1, 2, 3, 4] as const;
    const keys = new Set([
      dedupeKey(...base),
      dedupeKey('u', 'd', 's', 'c', 1, 2, 3, 5),
      dedupeKey('u', 'd', 's', 'c', 1, 2, 5, 4),
      dedupeKey('u', 'd', 's', 'c', 1, 3, 3, 4),
      dedupeKey('u', 'd', 's', 'c', 2, 2, 3, 4),
      dedupeKey('u', 'd', 's', 'x', 1, 2, 3, 4),
      dedupeKey('u', 'd', 'x', 'c', 1, 2, 3, 4),
      dedupeKey('u', 'x', 's', 'c', 1, 2, 3, 4),
      dedupeKey('x', 'd', 's', 'c', 1, 2, 3, 4),
      dedupeKey('u', 'ds', '', 'c', 1, 2, 3, 4),
    ]);
    expect(keys.size).toBe(10);
    expect(dedupeKey(...base)).toBe(dedupeKey(...base));
  });
});
