/**
 * What each field of the event record holds when it is not sent, as its `absent` in
 * shared/events/fields.ts says (the same words are in events.proto and docs/events.md, generated
 * from it, and read back by test/unit/docs/events.unit.test.ts): the
 * real server, each binding that carries events, the element left out, sent empty or sent nil, and
 * what the store then holds. PRESENCE_CASES is keyed by every field of EVENT_FIELDS, so a new
 * field does not compile without its cases here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFieldName, EventRecord } from '../../shared/events/schema.js';
import { credentials, event, sessionCookie, TestApp, xmlParams } from '../helpers/harness.js';

const codeOf = (text: string): number => Number(/(?:Result|int[^>]*)>(-?\d+)</.exec(text)?.[1] ?? NaN);

/** One way of sending an event: the operation's answer, and the stored record when it was accepted. */
interface Case {
  name: string;
  send: (t: TestApp, codigo: string) => Promise<string>;
  /** The field's stored value, or 'refused' when the event must be answered -3. */
  want: unknown;
}

const without = (name: string, e: Record<string, string> = event()): Record<string, string> => Object.fromEntries(Object.entries(e).filter(([k]) => k !== name));
const nil = (name: string) => `<${name} xsi:nil="true" />`;
const soapInsert = (params: string) => (t: TestApp) => t.soap11('LoginYInsertarEvento', params).then((r) => r.text);
const soapInsert2 = (params: string) => (t: TestApp) => t.soap12('LoginYInsertarEvento2', params).then((r) => r.text);

/** InsertarEvento (the only operation declaring Rumbo and Crudo) over SOAP, after a SOAP Login. */
function sessionSoap(params: string) {
  return async (t: TestApp): Promise<string> => {
    const login = await t.soap11('Login', xmlParams(credentials()));
    return (await t.soap11('InsertarEvento', params, undefined, sessionCookie(login))).text;
  };
}

/** InsertarEvento over HTTP POST (form), after an HTTP Login. */
function sessionForm(form: Record<string, string>) {
  return async (t: TestApp): Promise<string> => {
    const login = await t.post('Login', credentials());
    return (await t.post('InsertarEvento', form, sessionCookie(login))).text;
  };
}

/** InsertarEvento over HTTP GET, after an HTTP Login. */
function sessionGet(query: Record<string, string>) {
  return async (t: TestApp): Promise<string> => {
    const login = await t.post('Login', credentials());
    return (await t.get('InsertarEvento', query, sessionCookie(login))).text;
  };
}

/** LoginYInsertarEventos with one pEvento. */
const batchOf = (fields: Record<string, string>) => (t: TestApp) => t.soap11('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos><pEvento>${xmlParams(fields)}</pEvento></Eventos>`).then((r) => r.text);

const full = (codigo: string, extra: Record<string, string> = {}) => ({ ...event({ Codigo: codigo }), Rumbo: '90', Crudo: 'raw', ...extra });
const plain = (codigo: string) => xmlParams({ ...credentials(), ...event({ Codigo: codigo }) });

const always = (name: string, want: unknown): Case[] => [{ name: `${name}: LoginYInsertarEvento over SOAP`, send: (t, c) => soapInsert(plain(c))(t), want }];

const PRESENCE_CASES: Record<EventFieldName, Case[]> = {
  systemUser: always('the provider', 'acme'),
  dominio: [
    { name: 'trimmed', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...event({ Codigo: c, Dominio: '  AB 1  ' }) }))(t), want: 'AB 1' },
    { name: 'left out', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('Dominio', event({ Codigo: c })) }))(t), want: 'refused' },
    { name: 'blank', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...event({ Codigo: c, Dominio: '   ' }) }))(t), want: 'refused' },
  ],
  nroSerie: [
    { name: 'left out over SOAP', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('NroSerie', event({ Codigo: c })) }))(t), want: '' },
    { name: 'nil over SOAP', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('NroSerie', event({ Codigo: c })) }) + nil('NroSerie'))(t), want: '' },
    { name: 'left out of a form', send: (t, c) => sessionForm(without('NroSerie', full(c)))(t), want: '' },
    { name: 'left out of a pEvento', send: (t, c) => batchOf(without('NroSerie', event({ Codigo: c })))(t), want: '' },
  ],
  codigo: [{ name: 'sent', send: (t, c) => soapInsert(plain(c))(t), want: 'codigo' }],
  latitud: [{ name: 'left out over SOAP: XmlSerializer’s 0', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('Latitud', event({ Codigo: c })) }))(t), want: 0 }],
  longitud: [{ name: 'nil over SOAP: XmlSerializer’s 0', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('Longitud', event({ Codigo: c })) }) + nil('Longitud'))(t), want: 0 }],
  altitud: [{ name: 'left out of a form: Missing parameter', send: (t, c) => sessionForm(without('Altitud', full(c)))(t), want: 'fault' }],
  velocidad: always('sent', 42.5),
  rumbo: [
    { name: 'InsertarEvento over SOAP without Rumbo: XmlSerializer’s 0', send: (t, c) => sessionSoap(xmlParams(without('Rumbo', full(c))))(t), want: 0 },
    { name: 'InsertarEvento over SOAP with Rumbo nil: 0', send: (t, c) => sessionSoap(xmlParams(without('Rumbo', full(c))) + nil('Rumbo'))(t), want: 0 },
    { name: 'InsertarEvento over SOAP with Rumbo', send: (t, c) => sessionSoap(xmlParams(full(c, { Rumbo: '271.5' })))(t), want: 271.5 },
    { name: 'InsertarEvento form without Rumbo: Missing parameter', send: (t, c) => sessionForm(without('Rumbo', full(c)))(t), want: 'fault' },
    { name: 'LoginYInsertarEvento (no Rumbo parameter)', send: (t, c) => soapInsert(plain(c))(t), want: null },
    { name: 'LoginYInsertarEvento with Rumbo sent anyway', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...event({ Codigo: c }), Rumbo: '12.5' }))(t), want: 12.5 },
    { name: 'LoginYInsertarEvento2 with Rumbo sent anyway', send: (t, c) => soapInsert2(xmlParams({ ...credentials(), ...event({ Codigo: c }), Rumbo: '7' }))(t), want: 7 },
    { name: 'LoginYInsertarEvento form with Rumbo sent anyway', send: (t, c) => t.post('LoginYInsertarEvento', { ...credentials(), ...event({ Codigo: c }), Rumbo: '8.5' }).then((r) => r.text), want: 8.5 },
    { name: 'LoginYInsertarEventos: a pEvento’s Rumbo is not kept', send: (t, c) => batchOf({ ...event({ Codigo: c }), Rumbo: '12.5' })(t), want: null },
  ],
  validPosition: always('coordinates in range', true),
  valido: [
    { name: 'LoginYInsertarEvento', send: (t, c) => soapInsert(plain(c))(t), want: null },
    { name: 'LoginYInsertarEvento2 without Valido: XmlSerializer’s false', send: (t, c) => soapInsert2(plain(c))(t), want: false },
    { name: 'LoginYInsertarEvento2 with Valido', send: (t, c) => soapInsert2(xmlParams({ ...credentials(), ...event({ Codigo: c }), Valido: 'true' }))(t), want: true },
  ],
  eventTimeText: [
    { name: 'sent', send: (t, c) => soapInsert(plain(c))(t), want: '2026-11-22T08:59:30-03:00' },
    { name: 'left out', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('FechaHoraEvento', event({ Codigo: c })) }))(t), want: 'refused' },
    { name: 'nil', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('FechaHoraEvento', event({ Codigo: c })) }) + nil('FechaHoraEvento'))(t), want: 'refused' },
  ],
  eventTime: always('resolved', { epochMs: Date.UTC(2026, 10, 22, 11, 59, 30), subMsTicks: 0 }),
  receptionTimeText: [
    { name: 'sent', send: (t, c) => soapInsert(plain(c))(t), want: '2026-11-22T09:00:00-03:00' },
    { name: 'left out', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('FechaHoraRecepcion', event({ Codigo: c })) }))(t), want: 'refused' },
    { name: 'nil', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...without('FechaHoraRecepcion', event({ Codigo: c })) }) + nil('FechaHoraRecepcion'))(t), want: 'refused' },
    { name: 'empty in a form', send: (t, c) => sessionForm(full(c, { FechaHoraRecepcion: '' }))(t), want: 'refused' },
  ],
  receptionTime: always('resolved', { epochMs: Date.UTC(2026, 10, 22, 12, 0, 0), subMsTicks: 0 }),
  receivedAt: always('the gateway’s clock', 'now'),
  crudo: [
    { name: 'InsertarEvento over SOAP without Crudo', send: (t, c) => sessionSoap(xmlParams(without('Crudo', full(c))))(t), want: null },
    { name: 'InsertarEvento over SOAP with Crudo nil', send: (t, c) => sessionSoap(xmlParams(without('Crudo', full(c))) + nil('Crudo'))(t), want: null },
    { name: 'InsertarEvento over SOAP with Crudo empty', send: (t, c) => sessionSoap(xmlParams(full(c, { Crudo: '' })))(t), want: '' },
    { name: 'InsertarEvento form without Crudo: a missing form field is empty', send: (t, c) => sessionForm(without('Crudo', full(c)))(t), want: '' },
    { name: 'InsertarEvento over HTTP GET without Crudo', send: (t, c) => sessionGet(without('Crudo', full(c)))(t), want: '' },
    { name: 'LoginYInsertarEvento (no Crudo parameter)', send: (t, c) => soapInsert(plain(c))(t), want: null },
    { name: 'LoginYInsertarEvento with Crudo sent anyway', send: (t, c) => soapInsert(xmlParams({ ...credentials(), ...event({ Codigo: c }), Crudo: 'kept' }))(t), want: 'kept' },
    { name: 'LoginYInsertarEventos: a pEvento’s Crudo is not kept', send: (t, c) => batchOf({ ...event({ Codigo: c }), Crudo: 'x' })(t), want: null },
  ],
  sensors: [
    { name: 'LoginYInsertarEvento', send: (t, c) => soapInsert(plain(c))(t), want: [] },
    { name: 'LoginYInsertarEvento2 without Sensores', send: (t, c) => soapInsert2(plain(c))(t), want: [] },
    {
      name: 'LoginYInsertarEvento2: every pSensor in order, a Clave or Valor empty, left out or nil as ""',
      send: (t, c) =>
        soapInsert2(
          plain(c) +
            '<Sensores>' +
            '<pSensor><Clave>temp</Clave><Valor>21.5</Valor></pSensor>' +
            '<pSensor><Clave></Clave><Valor>a</Valor></pSensor>' +
            '<pSensor><Valor>b</Valor></pSensor>' +
            `<pSensor>${nil('Clave')}<Valor>c</Valor></pSensor>` +
            '<pSensor><Clave>door</Clave></pSensor>' +
            '<pSensor />' +
            '<pSensor><Clave>temp</Clave><Valor>22</Valor></pSensor>' +
            '</Sensores>',
        )(t),
      want: [
        { clave: 'temp', valor: '21.5' },
        { clave: '', valor: 'a' },
        { clave: '', valor: 'b' },
        { clave: '', valor: 'c' },
        { clave: 'door', valor: '' },
        { clave: '', valor: '' },
        { clave: 'temp', valor: '22' },
      ],
    },
  ],
  operation: always('the SOAP operation', 'LoginYInsertarEvento'),
  dedupeKey: always('set', 'non-empty'),
};

describe('what each event field holds when it is not sent (every binding carrying events, the embedded store)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ DEDUPE_WINDOW_MINUTES: '0', RATE_LIMIT_EVENTS_PER_SECOND: '0' });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  const cases = Object.entries(PRESENCE_CASES).flatMap(([field, list]) => list.map((c, i) => ({ field: field as EventFieldName, i, ...c })));

  it.each(cases)('$field: $name', async ({ field, i, send, want }) => {
    const codigo = field === 'codigo' ? 'codigo' : `${field}-${i}`.slice(0, 32);
    const text = await send(t, codigo);
    if (want === 'fault') {
      expect(text).toMatch(/^Missing parameter: \w+\.\r\n$/);
      return;
    }
    const code = codeOf(text);
    if (want === 'refused') {
      expect(code).toBe(-3);
      return;
    }
    expect(code, text).toBeGreaterThan(0);
    const stored = (await t.app.backends.events.recent({ provider: 'acme', limit: 100 })).find((e) => e.codigo === codigo) as EventRecord | undefined;
    expect(stored, `no stored event ${codigo}`).toBeDefined();
    const value = stored![field];
    if (want === 'now') expect(value).toBe(t.now);
    else if (want === 'non-empty') expect(typeof value === 'string' && value.length > 0).toBe(true);
    else expect(value).toEqual(want);
  });
});
