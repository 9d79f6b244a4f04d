/**
 * Wire fixtures, one directory per operation (kafkajs keeps one per API version):
 * test/fixtures/asmx/<Operation>/<binding>.request and .response hold the exact bytes of a call and
 * of the gateway's answer in each binding that carries the operation (soap11, soap12, get, post).
 * One table test replays every request through the router and the bindings in process (no socket,
 * no backend: the operation layer is a stand-in answering fixed results) and compares the answer
 * byte for byte. The socket-level golden test (test/embedded/golden.embedded.test.ts) stays for what only a real
 * connection shows.
 *
 * The fixtures were written once from the gateway's behaviour, which golden.test.ts and
 * asmx-fidelity.test.ts hold to ASMX's bytes. To add an operation's fixtures, run with
 * WRITE_WIRE_FIXTURES=1: requests missing on disk are built from the catalogue and every
 * response is written; review the diff.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CallContext } from '../../../gateway/service/context.js';
import type { OperationService } from '../../../gateway/service/service.js';
import { httpBindable, isArrayParam, operationList, type ArgumentBag, type OperationDef, type ScalarField } from '../../../shared/catalogue/index.js';
import { inProcessGateway, type WireReply, type WireRequest } from '../../helpers/in-process.js';
import { SAMPLE_EVENT } from '../../helpers/client-event.js';
import { FIXTURES as FIXTURE_ROOT } from '../../helpers/paths.js';

const FIXTURES = join(FIXTURE_ROOT, 'asmx');
const WRITE = process.env.WRITE_WIRE_FIXTURES === '1';
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const NS = 'http://tempuri.org/';
const PATH = '/service.asmx';
const CRLF = '\r\n';
const SESSION_ID = 'fixedsessionid0123450000';

type Binding = 'soap11' | 'soap12' | 'get' | 'post';
const bindingsOf = (op: OperationDef): Binding[] => (httpBindable(op) ? ['soap11', 'soap12', 'get', 'post'] : ['soap11', 'soap12']);

/** The operation layer's answers, fixed per result type so the bytes are the bindings' alone. */
const RESULTS: Record<string, (args: ArgumentBag) => unknown> = {
  boolean: () => true,
  int: () => 12345,
  ArrayOfInt: (args) => (Array.isArray(args.Eventos) ? args.Eventos.map((_, i) => 1001 + i) : []),
  Comando: () => ({ CMD: 'REBOOT <now> & "then" report', UNIDAD: 'AB123CD', EQUIPO: 'SN-1', NUMERO: 7 }),
  ArrayOfVehiculo: () => [
    { Dominio: 'AB123CD', NroSerie: 'SN-1', FechaUltimoReporte: '2026-11-22T08:59:30-03:00', FechaRegistracion: '2026-11-01T10:00:00-03:00' },
    { Dominio: 'XY987ZW', NroSerie: 'SN-2', FechaUltimoReporte: null, FechaRegistracion: '2026-11-02T11:30:00-03:00' },
  ],
};

const standIn = {
  start(op: OperationDef, args: ArgumentBag, ctx: CallContext, done: (result: unknown) => void): void {
    if (op.name === 'Login') ctx.newSessionId = SESSION_ID;
    const result = RESULTS[op.result.name];
    if (result === undefined) throw new Error(`no fixed result for ${op.result.name}`);
    done(result(args));
  },
} as unknown as OperationService;

// ---- the files ----------------------------------------------------------------------------------

function head(first: string, headers: readonly (readonly [string, string])[]): string {
  return [first, ...headers.map(([k, v]) => `${k}: ${v}`)].join(CRLF) + CRLF + CRLF;
}

function requestBytes(r: WireRequest): Buffer {
  return Buffer.concat([Buffer.from(head(`${r.method} ${r.target} HTTP/1.1`, r.headers), 'latin1'), r.body]);
}

function responseBytes(r: WireReply): Buffer {
  return Buffer.concat([Buffer.from(head(`HTTP/1.1 ${r.status}`, r.headers), 'latin1'), r.body]);
}

function parseRequest(bytes: Buffer): WireRequest {
  const end = bytes.indexOf(CRLF + CRLF);
  const [line = '', ...headerLines] = bytes.subarray(0, end).toString('latin1').split(CRLF);
  const [method = '', target = ''] = line.split(' ');
  const headers = headerLines.map((h) => {
    const colon = h.indexOf(': ');
    return [h.slice(0, colon), h.slice(colon + 2)] as const;
  });
  return { method, target, headers, body: bytes.subarray(end + 4) };
}

// ---- requests built from the catalogue (only when a fixture is written for the first time) -----

const SAMPLE: Record<string, string> = {
  SystemUser: 'acme',
  Password: 'secret-1',
  AntiguaClave: 'secret-1',
  NuevaClave: 'secret-2 & more',
  ...SAMPLE_EVENT,
  Rumbo: '90',
  Crudo: '$GPRMC,123519,A*6A',
  Valido: 'true',
  NUMERO: '7',
  correcto: 'true',
  MSG: 'done <ok>',
  Clave: 'temp',
  Valor: '21.5',
};

const sample = (f: ScalarField): string => SAMPLE[f.name] ?? (f.type === 'string' ? 'x' : '');
const xmlText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function soapParams(op: OperationDef): string {
  return op.params
    .map((p) => {
      if (!isArrayParam(p)) return `<${p.name}>${xmlText(sample(p))}</${p.name}>`;
      const item = p.type.item;
      if (typeof item === 'string') return `<${p.name} />`;
      const one = (n: number): string => `<${item.name}>${item.fields.map((f) => `<${f.name}>${xmlText(f.name === 'Codigo' ? String(n) : sample(f))}</${f.name}>`).join('')}</${item.name}>`;
      return `<${p.name}>${one(1)}${one(2)}</${p.name}>`;
    })
    .join('');
}

function formBody(op: OperationDef): string {
  return op.params.map((p) => `${p.name}=${encodeURIComponent(isArrayParam(p) ? '' : sample(p))}`).join('&');
}

function buildRequest(op: OperationDef, binding: Binding): WireRequest {
  const inner = `<${op.name} xmlns="${NS}">${soapParams(op)}</${op.name}>`;
  const decl = '<?xml version="1.0" encoding="utf-8"?>';
  const xsiXsd = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"';
  switch (binding) {
    case 'soap11': {
      const body = `${decl}<soap:Envelope ${xsiXsd} xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${inner}</soap:Body></soap:Envelope>`;
      return { method: 'POST', target: PATH, headers: [['Content-Type', 'text/xml; charset=utf-8'], ['SOAPAction', `"${NS}${op.name}"`]], body: Buffer.from(body) };
    }
    case 'soap12': {
      const body = `${decl}<soap12:Envelope ${xsiXsd} xmlns:soap12="http://www.w3.org/2003/05/soap-envelope"><soap12:Body>${inner}</soap12:Body></soap12:Envelope>`;
      return { method: 'POST', target: PATH, headers: [['Content-Type', 'application/soap+xml; charset=utf-8']], body: Buffer.from(body) };
    }
    case 'get': {
      const query = formBody(op);
      return { method: 'GET', target: `${PATH}/${op.name}${query === '' ? '' : `?${query}`}`, headers: [], body: Buffer.alloc(0) };
    }
    case 'post':
      return { method: 'POST', target: `${PATH}/${op.name}`, headers: [['Content-Type', 'application/x-www-form-urlencoded']], body: Buffer.from(formBody(op)) };
  }
}

// ---- the table ----------------------------------------------------------------------------------

const gateway = inProcessGateway(standIn, () => NOW);
const cases = operationList.flatMap((op) => bindingsOf(op).map((binding) => ({ op, binding })));

describe('wire fixtures (test/fixtures/asmx), through the bindings in process', () => {
  it.each(cases.map((c) => [c.op.name, c.binding, c.op] as const))('%s over %s', async (name, binding, op) => {
    const dir = join(FIXTURES, name);
    const requestFile = join(dir, `${binding}.request`);
    const responseFile = join(dir, `${binding}.response`);
    if (WRITE && !existsSync(requestFile)) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(requestFile, requestBytes(buildRequest(op, binding)));
    }
    const reply = responseBytes(await gateway.send(parseRequest(readFileSync(requestFile))));
    if (WRITE) writeFileSync(responseFile, reply);
    expect(reply.toString('latin1')).toBe(readFileSync(responseFile).toString('latin1'));
  });

  it('has a fixture pair for every operation in every binding that carries it, and nothing else', () => {
    const expected = cases.flatMap(({ op, binding }) => [`${op.name}/${binding}.request`, `${op.name}/${binding}.response`]).sort();
    const onDisk = readdirSync(FIXTURES).flatMap((dir) => readdirSync(join(FIXTURES, dir)).map((f) => `${dir}/${f}`)).sort();
    expect(onDisk).toEqual(expected);
  });
});
