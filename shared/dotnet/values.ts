/**
 * Parsing of XML Schema scalar values as the deployed service accepts them (XmlConvert rules,
 * made a little more lenient, docs/protocol.md §Value conversion). Parsers return `undefined` for text they cannot
 * read, never throw: the caller decides whether that is a fault or an invalid event (-3).
 * dateTime: xml-convert.ts. HTTP GET/POST values: dotnet-convert.ts.
 */

const INT_RE = /^[+-]?\d+$/;
const DOUBLE_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

export function parseInt32(text: string): number | undefined {
  const t = text.trim();
  if (!INT_RE.test(t)) return undefined;
  const n = Number(t);
  return n >= INT_MIN && n <= INT_MAX ? n : undefined;
}

/** `true`/`false` in any case, and `1`/`0`. */
export function parseBoolean(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  return undefined;
}

/** Invariant culture; INF, -INF and NaN as XmlConvert writes them. NaN for unreadable text. */
export function parseDouble(text: string): number {
  const t = text.trim();
  if (DOUBLE_RE.test(t)) return Number(t);
  if (t === 'INF' || t === '+INF') return Infinity;
  if (t === '-INF') return -Infinity;
  return NaN;
}
