import { hash } from 'node:crypto';
import { ScratchBytes } from '../../shared/util/scratch-bytes.js';

/**
 * The resend-dedupe key of an event: the base64 SHA-256 of its identity,
 * `systemUser \0 dominio \0 nroSerie \0 codigo \0 epochMs.subMsTicks \0 latitud \0 longitud`
 * in UTF-8. Stored keys (SQLite, Kafka) and the index rebuilt from them at start depend on these
 * exact bytes, so they never change.
 *
 * The identity is written into one reused buffer instead of concatenated: the template string's
 * thirteen pieces and the flat copy hashing made of them were the largest allocation left in a
 * durable insert (bench/allocations.ts). test/unit/gateway/service/dedupe-key.unit.test.ts holds it to the template.
 */
export function dedupeKey(systemUser: string, dominio: string, nroSerie: string, codigo: string, epochMs: number, subMsTicks: number, latitud: number, longitud: number): string {
  const texts = 3 * (systemUser.length + dominio.length + nroSerie.length + codigo.length);
  // Numbers print in at most 25 characters each (a double's shortest form), plus the separators.
  const buf = scratch.reserve(texts + 4 * 25 + 8);
  let p = put(buf, systemUser, 0);
  buf[p++] = 0;
  p = put(buf, dominio, p);
  buf[p++] = 0;
  p = put(buf, nroSerie, p);
  buf[p++] = 0;
  p = put(buf, codigo, p);
  buf[p++] = 0;
  p = putInteger(buf, epochMs, p);
  buf[p++] = 0x2e; // '.'
  p = putInteger(buf, subMsTicks, p);
  buf[p++] = 0;
  p = put(buf, numberText(latitud), p);
  buf[p++] = 0;
  p = put(buf, numberText(longitud), p);
  return hash('sha256', scratch.view(p), 'base64');
}

/**
 * String(x) for a double, without V8's number-string cache: String() of a number the cache misses
 * allocates its text in the old generation (to keep it in the cache), so every event's position
 * grew the old generation, page by page, until a full collection (15% of a fresh gateway's page
 * faults: bench/perf.ts PERF_EVENT=page-faults, 2026-11-29). JSON.stringify writes a finite number
 * as ToString does (ECMA-262 SerializeJSONProperty) into a young string; NaN and the infinities it
 * writes as null, so those go through String().
 */
function numberText(x: number): string {
  return Number.isFinite(x) ? JSON.stringify(x) : String(x);
}

/** The decimal digits of a safe integer as String(n) writes them, straight into the buffer; any other number as String(n). */
function putInteger(buf: Buffer, n: number, p: number): number {
  if (!Number.isSafeInteger(n)) return put(buf, String(n), p);
  if (n < 0) {
    buf[p++] = 0x2d; // '-'
    n = -n;
  }
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  for (let i = p + digits - 1; i >= p; i--) {
    buf[i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  return p + digits;
}

const scratch = new ScratchBytes();

/** UTF-8 of `s` at `p`; ASCII byte by byte (shorter than a native call), the rest by Buffer. */
function put(buf: Buffer, s: string, p: number): number {
  const n = s.length;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    buf[p++] = c;
  }
  if (i < n) p += buf.write(i === 0 ? s : s.slice(i), p, 'utf8');
  return p;
}
