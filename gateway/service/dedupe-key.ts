import { hash } from 'node:crypto';

/**
 * The resend-dedupe key of an event: the base64 SHA-256 of its identity,
 * `systemUser \0 dominio \0 nroSerie \0 codigo \0 epochMs.subMsTicks \0 latitud \0 longitud`
 * in UTF-8. Stored keys (SQLite, Kafka) and the index rebuilt from them at start depend on these
 * exact bytes, so they never change.
 *
 * The identity is written into one reused buffer instead of concatenated: the template string's
 * thirteen pieces and the flat copy hashing made of them were the largest allocation left in a
 * durable insert (bench/allocations.ts). test/dedupe-key.unit.test.ts holds it to the template.
 */
export function dedupeKey(systemUser: string, dominio: string, nroSerie: string, codigo: string, epochMs: number, subMsTicks: number, latitud: number, longitud: number): string {
  const texts = 3 * (systemUser.length + dominio.length + nroSerie.length + codigo.length);
  // Numbers print in at most 25 characters each (a double's shortest form), plus the separators.
  if (scratch.length < texts + 4 * 25 + 8) grow(texts + 4 * 25 + 8);
  let p = put(systemUser, 0);
  scratch[p++] = 0;
  p = put(dominio, p);
  scratch[p++] = 0;
  p = put(nroSerie, p);
  scratch[p++] = 0;
  p = put(codigo, p);
  scratch[p++] = 0;
  p = put(String(epochMs), p);
  scratch[p++] = 0x2e; // '.'
  p = put(String(subMsTicks), p);
  scratch[p++] = 0;
  p = put(String(latitud), p);
  scratch[p++] = 0;
  p = put(String(longitud), p);
  let input = views[p];
  if (input === undefined) views[p] = input = scratch.subarray(0, p);
  return hash('sha256', input, 'base64');
}

let scratch = Buffer.allocUnsafe(1024);
/** Views of `scratch` by length, made once each (a view per call was an object per event). */
let views: (Buffer | undefined)[] = [];

function grow(size: number): void {
  scratch = Buffer.allocUnsafe(Math.max(size, scratch.length * 2));
  views = [];
}

/** UTF-8 of `s` at `p`; ASCII byte by byte (shorter than a native call), the rest by Buffer. */
function put(s: string, p: number): number {
  const n = s.length;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    scratch[p++] = c;
  }
  if (i < n) p += scratch.write(i === 0 ? s : s.slice(i), p, 'utf8');
  return p;
}
