/**
 * The SOAP binding's parse step, old against new: a request body (bytes, in chunks) to the
 * SoapEnvelope the binding dispatches on.
 *   - saxes: BodyDecoder (TextDecoder) per request + the pooled saxes EnvelopeReader, as the binding did;
 *   - scanner: SoapBodyReader + pooled EnvelopeScanner over the UTF-8 bytes, as the binding does now.
 * Bodies: the ~900-byte bench fixture (two chunks) and a 100-event LoginYInsertarEventos batch in
 * the same layout (16 KiB chunks). Before timing, both readers must return the same envelope for
 * each body, twice in a row (a reused reader starts clean).
 */
import { deepStrictEqual } from 'node:assert/strict';
import { BodyDecoder } from '../../gateway/transport/body-decoder.js';
import type { SoapEnvelope } from '../../gateway/bindings/soap/envelope.js';
import { EnvelopeReader } from '../../test/differential/saxes-envelope-reader.js';
import { ScannerPool, SoapBodyReader } from '../../gateway/bindings/soap/scanner/body-reader.js';
import { EnvelopeScanner } from '../../test/differential/reference/envelope-builder.js';

type Read = (chunks: readonly Uint8Array[]) => SoapEnvelope;

function saxesReader(): Read {
  const reader = new EnvelopeReader();
  return (chunks) => {
    const decoder = new BodyDecoder('utf-8');
    chunks.forEach((c, i) => {
      const text = decoder.push(c, i === chunks.length - 1);
      if (text !== '') reader.write(text);
    });
    return reader.end();
  };
}

function scannerReader(): Read {
  const pool = new ScannerPool(() => new EnvelopeScanner());
  return (chunks) => {
    const body = new SoapBodyReader('utf-8', pool);
    chunks.forEach((c, i) => body.push(c, i === chunks.length - 1));
    const envelope = body.end();
    body.release();
    return envelope;
  };
}

/** The fixture's event as the n-th item of a batch, in the fixture's indentation. */
function eventItem(n: number): string {
  const pad = '\n        ';
  const fields: [string, string][] = [
    ['Dominio', `AB${String(100 + n)}CD`],
    ['NroSerie', '860123456789012'],
    ['Codigo', String(n % 7).padStart(2, '0')],
    ['Latitud', `-34.${String(6037221 + n * 13)}`],
    ['Longitud', `-58.${String(3815704 + n * 7)}`],
    ['Altitud', '25.5'],
    ['Velocidad', (n * 3.7).toFixed(1)],
    ['FechaHoraEvento', `2026-03-14T15:${String(10 + (n % 50)).padStart(2, '0')}:26.535-03:00`],
    ['FechaHoraRecepcion', `2026-03-14T15:${String(10 + (n % 50)).padStart(2, '0')}:27.1691795-03:00`],
  ];
  return `\n        <pEvento>${fields.map(([k, v]) => `${pad}  <${k}>${v}</${k}>`).join('')}${pad}</pEvento>`;
}

export function batchBody(events: number): Buffer {
  return Buffer.from(
    '<?xml version="1.0" encoding="utf-8"?>\n' +
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
      '  <soap:Body>\n    <LoginYInsertarEventos xmlns="http://tempuri.org/">\n' +
      '      <SystemUser>prestador01</SystemUser>\n      <Password>s3cr3t&amp;pass</Password>\n      <Eventos>' +
      Array.from({ length: events }, (_, n) => eventItem(n)).join('') +
      '\n      </Eventos>\n    </LoginYInsertarEventos>\n  </soap:Body>\n</soap:Envelope>\n',
  );
}

/** Copies, as uWS hands out fresh ArrayBuffer views per chunk. */
function chunked(body: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < body.length; i += size) out.push(Uint8Array.from(body.subarray(i, i + size)));
  return out;
}

export interface ReaderBody {
  readonly name: string;
  readonly bytes: number;
  readonly chunks: readonly Uint8Array[];
}

export function readerBodies(fixture: Uint8Array): ReaderBody[] {
  const batch = batchBody(100);
  return [
    { name: `fixture, ${fixture.length} B in 2 chunks`, bytes: fixture.length, chunks: [fixture.slice(0, fixture.length >> 1), fixture.slice(fixture.length >> 1)] },
    { name: `100-event batch, ${batch.length} B in 16 KiB chunks`, bytes: batch.length, chunks: chunked(batch, 16 * 1024) },
  ];
}

export interface ReaderVariant {
  readonly reader: 'saxes' | 'scanner';
  readonly body: ReaderBody;
  readonly read: Read;
}

export function readerVariants(bodies: readonly ReaderBody[]): ReaderVariant[] {
  const variants: ReaderVariant[] = [];
  for (const body of bodies) {
    const saxes = saxesReader();
    const scanner = scannerReader();
    const expected = saxes(body.chunks);
    deepStrictEqual(saxes(body.chunks), expected, `saxes, ${body.name}: reused reader`);
    deepStrictEqual(scanner(body.chunks), expected, `scanner, ${body.name}: same envelope as saxes`);
    deepStrictEqual(scanner(body.chunks), expected, `scanner, ${body.name}: reused scanner`);
    variants.push({ reader: 'saxes', body, read: saxes }, { reader: 'scanner', body, read: scanner });
  }
  return variants;
}
