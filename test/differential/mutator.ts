/**
 * Byte-level mutations of an envelope (flips, replacements, insertions of XML-significant
 * fragments and bad UTF-8, deletions, truncations, duplications, splices with another envelope)
 * and the chunk boundaries a body is delivered with (anywhere: inside a tag, a reference, `]]>`
 * or a multi-byte character).
 */
import type { Rng } from './rng.js';

const INTERESTING_BYTES = [0x3c, 0x3e, 0x26, 0x3b, 0x22, 0x27, 0x2f, 0x5d, 0x3f, 0x21, 0x2d, 0x3d, 0x3a, 0x23, 0x78, 0x00, 0x09, 0x0a, 0x0d, 0x20, 0x7f, 0x80, 0x85, 0xbf, 0xc2, 0xc0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf8, 0xff];

const FRAGMENTS: readonly (string | readonly number[])[] = [
  '<', '>', '&', ';', '/', '</', '/>', ']]>', ']]', '<!--', '-->', '--', '<![CDATA[', '<!', '<?', '?>',
  '&amp;', '&lt;', '&foo;', '&#x0;', '&#xD800;', '&#xFFFE;', '&#x10FFFF;', '&#x110000;', '&#65;', '&#X41;', '&#;', '&;', '&#x85;', '&#1;',
  '<?pi?>', '<?xml version="1.0"?>', '<?xml version="1.1"?>', '<?XML x?>', '<?pi??>', '<!DOCTYPE x>', '<!DOCTYPE x [<!ENTITY e "v">]>',
  ' a="1"', ' a="1" a="2"', ' xmlns:x="urn:x"', ' xsi:nil="true"', ' nil="1"', '<x>', '</x>', '<x/>', '<Body>', '</Body>', '\r', '\r\n', '\t',
  '\u0085', '\u2028', '\uFFFE', '\uFEFF', 'é', '😀', 'version="1.1"', 'encoding="latin1"', "'", '"', '=',
  [0xef, 0xbb, 0xbf], [0x80], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x9f, 0x98], [0xc2, 0x85],
];

/** Inserted right after an element name: damage inside a start tag. */
const IN_TAG = [
  ' a="1" a="2"', ' a="1"', ' a=\'1\' b="2"', ' b', ' c=d', ' e="<"', ' f="&x;"', ' g="&#0;"', ' h="&#x20AC;&amp;"', '/', ' /', '=', ' 1a="x"',
  ' xmlns:x="urn:x"', ' xmlns=""', ' xsi:nil="true"', ' nil="true"', ' p:nil="1" nil="0"', ':x', '\u00b7', '-', ' xml:lang="en"', '\t\r\n', ' a="1"a="2"',
];

/** Inserted right after a '>': damage in content. */
const IN_CONTENT = ['&#x0;', '&#xFFFF;', '&bogus;', '&#60;', ']]>', ']]&gt;', '<!---->', '<!-- -- -->', '<![CDATA[]]>', '<?pi ?>', '<?xml?>', '<a/>', '</a>', '\u0001', '\r\n\r', '&amp', '<', '&#x1F600;'];

/** A random offset just after a start tag's name (or -1). */
function afterTagName(rng: Rng, b: Uint8Array): number {
  const starts: number[] = [];
  for (let i = 0; i + 1 < b.length; i++) {
    const n = b[i + 1]!;
    if (b[i] === 0x3c && ((n >= 0x41 && n <= 0x5a) || (n >= 0x61 && n <= 0x7a))) starts.push(i + 1);
  }
  if (starts.length === 0) return -1;
  let at = rng.pick(starts);
  while (at < b.length && b[at] !== 0x20 && b[at] !== 0x3e && b[at] !== 0x2f && b[at] !== 0x09 && b[at] !== 0x0a && b[at] !== 0x0d) at++;
  return at;
}

function afterGreater(rng: Rng, b: Uint8Array): number {
  const ends: number[] = [];
  for (let i = 0; i < b.length; i++) if (b[i] === 0x3e) ends.push(i + 1);
  return ends.length === 0 ? -1 : rng.pick(ends);
}

function fragment(rng: Rng): Uint8Array {
  const f = rng.pick(FRAGMENTS);
  return typeof f === 'string' ? Buffer.from(f, 'utf8') : Uint8Array.from(f);
}

function join(...parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

/** One to three mutations of `input`; `other` is material for splices. */
export function mutate(rng: Rng, input: Uint8Array, other: Uint8Array): Uint8Array {
  let out = input;
  const n = rng.pick([1, 1, 1, 2, 3]);
  for (let k = 0; k < n; k++) out = mutateOnce(rng, out, other);
  return out;
}

function mutateOnce(rng: Rng, b: Uint8Array, other: Uint8Array): Uint8Array {
  const at = rng.int(b.length + 1);
  switch (rng.int(11)) {
    case 9:
    case 10: {
      const inTag = rng.chance(0.5);
      const where = inTag ? afterTagName(rng, b) : afterGreater(rng, b);
      if (where < 0) return b;
      return join(b.subarray(0, where), Buffer.from(rng.pick(inTag ? IN_TAG : IN_CONTENT), 'utf8'), b.subarray(where));
    }
    case 0: {
      if (b.length === 0) return b;
      const out = Uint8Array.from(b);
      const i = Math.min(at, b.length - 1);
      out[i] = out[i]! ^ (1 << rng.int(8));
      return out;
    }
    case 1: {
      if (b.length === 0) return b;
      const out = Uint8Array.from(b);
      out[Math.min(at, b.length - 1)] = rng.chance(0.7) ? rng.pick(INTERESTING_BYTES) : rng.int(256);
      return out;
    }
    case 2:
    case 3:
      return join(b.subarray(0, at), fragment(rng), b.subarray(at));
    case 4: {
      const len = rng.range(1, 16);
      return join(b.subarray(0, at), b.subarray(Math.min(b.length, at + len)));
    }
    case 5:
      return b.subarray(0, at);
    case 6: {
      const from = rng.int(b.length + 1);
      const len = rng.range(1, 40);
      return join(b.subarray(0, at), b.subarray(from, from + len), b.subarray(at));
    }
    case 7: {
      const from = rng.int(other.length + 1);
      const to = from + rng.range(0, 200);
      const cut = at + rng.range(0, 200);
      return join(b.subarray(0, at), other.subarray(from, to), b.subarray(Math.min(b.length, cut)));
    }
    default: {
      // Swap an attribute's quote or a name's case: small, plausible damage.
      const out = Uint8Array.from(b);
      for (let i = at; i < out.length; i++) {
        const c = out[i]!;
        if (c === 0x22 || c === 0x27) {
          out[i] = c === 0x22 ? 0x27 : 0x22;
          break;
        }
        if (c >= 0x61 && c <= 0x7a && rng.chance(0.3)) {
          out[i] = c - 0x20;
          break;
        }
      }
      return out;
    }
  }
}

/** Offsets where the body is split into chunks (ascending, inside (0, length)). */
export function chunkPlan(rng: Rng, length: number): number[] {
  if (length < 2) return [];
  switch (rng.int(4)) {
    case 0:
      return [];
    case 1:
      return [rng.range(1, length - 1)];
    case 2: {
      const points = new Set<number>();
      const n = rng.range(2, 12);
      for (let k = 0; k < n; k++) points.add(rng.range(1, length - 1));
      return [...points].sort((x, y) => x - y);
    }
    default: {
      const size = rng.pick([1, 1, 2, 3, 7]);
      const points: number[] = [];
      for (let i = size; i < length; i += size) points.push(i);
      return points;
    }
  }
}

export function chunksOf(bytes: Uint8Array, plan: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let from = 0;
  for (const p of plan) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}
