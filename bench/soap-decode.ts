/**
 * The SOAP binding's request side, interpreted against compiled, in-process: a request body (bytes,
 * in chunks) to the DecodedCall the operation layer receives.
 *   - interpreted: SoapBodyReader + pooled EnvelopeScanner (node tree) + decodeSoapArguments, as
 *     the binding did;
 *   - compiled: SoapBodyReader + pooled CallScanner (the operation's slots) + its SoapArgumentDecoder's
 *     decode, as the binding does now (gateway/bindings/soap/compiled/README.md).
 * Bodies: the ~900-byte bench fixture (LoginYInsertarEvento, two chunks) and a 100-event
 * LoginYInsertarEventos batch (16 KiB chunks). Before timing, both must give the same DecodedCall
 * for each body. Rounds alternate the two paths, so drift on a shared machine hits both alike.
 *
 *   npx tsx bench/soap-decode.ts [--time=2] [--rounds=5]      (npm run bench:decode)
 */
import { deepStrictEqual } from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { findOperation } from '../shared/catalogue/index.js';
import { todayIn, type DecodedCall } from '../gateway/bindings/arguments.js';
import { decodeSoapArguments } from '../test/differential/reference/soap-arguments.js';
import { ScannerPool, SoapBodyReader } from '../gateway/bindings/soap/scanner/body-reader.js';
import { EnvelopeScanner } from '../test/differential/reference/envelope-builder.js';
import { CallScanner, type ScannedCall } from '../gateway/bindings/soap/compiled/call-builder.js';
import { catalogPlans } from '../gateway/bindings/soap/compiled/argument-decoder.js';
import { readerBodies, type ReaderBody } from './lib/envelope-readers.js';

const option = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const SECONDS = Number(option('time', '2'));
const ROUNDS = Number(option('rounds', '5'));

const today = todayIn('UTC', () => Date.now());
type Decode = (chunks: readonly Uint8Array[]) => DecodedCall;

function interpreted(): Decode {
  const pool = new ScannerPool(() => new EnvelopeScanner());
  return (chunks) => {
    const body = new SoapBodyReader('utf-8', pool);
    chunks.forEach((c, i) => body.push(c, i === chunks.length - 1));
    const env = body.end();
    body.release();
    return decodeSoapArguments(findOperation(env.operation!.name)!, env.operation!.children, today);
  };
}

function compiled(): Decode {
  const pool = new ScannerPool<ScannedCall>(() => new CallScanner(catalogPlans));
  return (chunks) => {
    const body = new SoapBodyReader('utf-8', pool);
    chunks.forEach((c, i) => body.push(c, i === chunks.length - 1));
    const call = body.end();
    try {
      return catalogPlans.decode(findOperation(call.operation!)!, call.record, today);
    } finally {
      body.release();
    }
  };
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

let sink = 0;

/** Calls per CPU-second of one path on one body. */
function rate(decode: Decode, body: ReaderBody): number {
  const start = cpuSeconds();
  let n = 0;
  let cpu: number;
  do {
    for (let i = 0; i < 16; i++) sink += Object.keys(decode(body.chunks).args).length;
    n += 16;
    cpu = cpuSeconds() - start;
  } while (cpu < SECONDS);
  return n / cpu;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const here = import.meta.dirname;
const bodies = readerBodies(readFileSync(join(here, 'fixtures', 'login-y-insertar-evento.soap11.xml')));
const paths = { interpreted: interpreted(), compiled: compiled() };
for (const body of bodies) {
  const expected = paths.interpreted(body.chunks);
  deepStrictEqual(paths.compiled(body.chunks), expected, `compiled, ${body.name}: same DecodedCall`);
  deepStrictEqual(paths.compiled(body.chunks), expected, `compiled, ${body.name}: reused slots`);
}
console.log(`verified: both paths give the same DecodedCall for each body (load ${loadavg().map((x) => x.toFixed(2)).join(' ')})\n`);
console.log('| body | interpreted calls/s per CPU-s | compiled calls/s per CPU-s | µs per call, interpreted → compiled | compiled / interpreted (median of per-round ratios) |');
console.log('|---|---:|---:|---:|---:|');
for (const body of bodies) {
  const a: number[] = [];
  const b: number[] = [];
  const ratios: number[] = [];
  rate(paths.interpreted, body); // warm-up
  rate(paths.compiled, body);
  for (let r = 0; r < ROUNDS; r++) {
    a.push(rate(paths.interpreted, body));
    b.push(rate(paths.compiled, body));
    ratios.push(b[r]! / a[r]!);
  }
  const us = (x: number) => (1e6 / x).toFixed(2);
  console.log(`| ${body.name} | ${Math.round(median(a)).toLocaleString('en-US')} | ${Math.round(median(b)).toLocaleString('en-US')} | ${us(median(a))} → ${us(median(b))} | ${median(ratios).toFixed(2)}x |`);
}
if (sink === 0) console.log('');
