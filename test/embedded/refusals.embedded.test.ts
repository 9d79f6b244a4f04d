/**
 * The call pipeline's refusals (docs/protocol.md §Limits, §Result codes): values the stores cannot
 * hold are a per-event -3, never a -5; every declared limit is enforced with the operation's
 * documented answer; over-long credentials are "not authenticated" and count no failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LENGTH, MAX_SENSORS } from '../../shared/catalogue/index.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';

const ints = (text: string): number[] => [...text.matchAll(/<int>(-?\d+)<\/int>/g)].map((m) => Number(m[1]));
const codeOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);

let t: TestApp;
beforeAll(async () => {
  t = await TestApp.start();
  await t.provider('acme', 'secret-1');
  await t.provider('tokyo', 'secret-1', { timeZone: 'Asia/Tokyo' });
  await t.provider('lima', 'secret-1', { timeZone: 'America/Lima' });
});
afterAll(() => t.stop());

async function batch(user: string, events: Record<string, string>[]): Promise<number[]> {
  const items = events.map((e) => `<pEvento>${xmlParams(e)}</pEvento>`).join('');
  const r = await t.soap11('LoginYInsertarEventos', `${xmlParams(credentials(user))}<Eventos>${items}</Eventos>`);
  expect(r.status).toBe(200);
  return ints(r.text);
}

async function stored(user: string): Promise<string[]> {
  return (await t.app.backends.events.recent({ provider: user, limit: 1000 })).map((e) => e.codigo);
}

describe('values the stores cannot hold', () => {
  it('a date outside 0001..9999 is -3 for that event only; the rest of the batch is stored', async () => {
    const codes = await batch('acme', [
      event({ Codigo: 'ok-1' }),
      event({ Codigo: 'huge-year', FechaHoraEvento: '275760-09-14T00:00:00Z' }),
      event({ Codigo: 'ok-2' }),
      event({ Codigo: 'before-min', FechaHoraRecepcion: '0001-01-01T00:00:00+01:00' }),
      event({ Codigo: 'ok-3' }),
    ]);
    expect(codes.map((c) => (c > 0 ? 'id' : c))).toEqual(['id', -3, 'id', -3, 'id']);
    expect((await stored('acme')).filter((c) => c.startsWith('ok-') || c === 'huge-year' || c === 'before-min').sort()).toEqual([
      'ok-1',
      'ok-2',
      'ok-3',
    ]);
  });

  it('local times are checked after the provider zone is applied (east of UTC at the start, west at the end)', async () => {
    const first = '0001-01-01T00:00:00';
    const last = '9999-12-31T23:59:59';
    expect(await batch('tokyo', [event({ Codigo: 't1', FechaHoraEvento: first }), event({ Codigo: 't2', FechaHoraEvento: last })])).toEqual([
      -3,
      expect.any(Number) as number,
    ]);
    const lima = await batch('lima', [event({ Codigo: 'l1', FechaHoraEvento: first }), event({ Codigo: 'l2', FechaHoraEvento: last })]);
    expect(lima[0]).toBeGreaterThan(0);
    expect(lima[1]).toBe(-3);
  });

  it('the same over HTTP POST and with a provider zone: a -3, never a 500 or a -5', async () => {
    const r = await t.post('LoginYInsertarEvento', { ...credentials('tokyo'), ...event({ Codigo: 'h1', FechaHoraEvento: '0001-01-01T00:00:00' }) });
    expect(r.status).toBe(200);
    expect(r.text).toContain('>-3</int>');
  });
});

describe('declared limits', () => {
  it('an over-long event field is -3 for that event of a batch, the others are stored', async () => {
    const codes = await batch('acme', [
      event({ Codigo: 'lim-ok-1' }),
      event({ Codigo: 'lim-long-dominio', Dominio: 'D'.repeat(MAX_LENGTH.dominio + 1) }),
      event({ Codigo: 'lim-ok-2' }),
      event({ Codigo: 'N'.repeat(MAX_LENGTH.codigo + 1) }),
    ]);
    expect(codes.map((c) => (c > 0 ? 'id' : c))).toEqual(['id', -3, 'id', -3]);
    expect((await stored('acme')).filter((c) => c.startsWith('lim-')).sort()).toEqual(['lim-ok-1', 'lim-ok-2']);
  });

  it('a limit is the length itself: exactly maxLength is accepted', async () => {
    const codes = await batch('acme', [event({ Codigo: 'x'.repeat(MAX_LENGTH.codigo), Dominio: 'D'.repeat(MAX_LENGTH.dominio) })]);
    expect(codes[0]).toBeGreaterThan(0);
  });

  it('an over-long MSG is false and appends nothing to the command history', async () => {
    const queued = await t.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB123CD', equipo: '42' });
    const numero = String((queued.json as { numero: number }).numero);
    const status = (msg: string) => t.post('LoginYEstadoComando', { ...credentials(), NUMERO: numero, MSG: msg });
    expect((await status('M'.repeat(1_000_000))).text).toContain('>false</boolean>');
    expect((await status('M'.repeat(MAX_LENGTH.msg + 1))).text).toContain('>false</boolean>');
    expect((await status('M'.repeat(MAX_LENGTH.msg))).text).toContain('>true</boolean>');
    const listed = await t.admin('GET', '/admin/providers/acme/commands');
    const history = (listed.json as { commands: { numero: number; history: { kind: string; message: string }[] }[] }).commands
      .find((c) => String(c.numero) === numero)
      ?.history.filter((h) => h.kind === 'status');
    expect(history?.map((h) => h.message.length)).toEqual([MAX_LENGTH.msg]);
  });

  it('an over-long NuevaClave is false and the password stays', async () => {
    const r = await t.soap11('LoginYCambiarClave', xmlParams({ ...credentials(), NuevaClave: 'n'.repeat(500) }));
    expect(r.text).toContain('<LoginYCambiarClaveResult>false</LoginYCambiarClaveResult>');
    expect((await t.soap11('Login', xmlParams(credentials()))).text).toContain('>true<');
  });

  it('more sensors than MAX_SENSORS, or an over-long sensor value, make the event invalid', async () => {
    const sensors = (n: number, value = 'v') =>
      `<Sensores>${Array.from({ length: n }, (_, i) => `<pSensor><Clave>k${i}</Clave><Valor>${value}</Valor></pSensor>`).join('')}</Sensores>`;
    const call = async (codigo: string, extra: string) =>
      codeOf((await t.soap11('LoginYInsertarEvento2', `${xmlParams({ ...credentials(), ...event({ Codigo: codigo }), Valido: 'true' })}${extra}`)).text);
    expect(await call('s-ok', sensors(MAX_SENSORS))).toBeGreaterThan(0);
    expect(await call('s-many', sensors(MAX_SENSORS + 1))).toBe(-3);
    expect(await call('s-long', sensors(1, 'v'.repeat(MAX_LENGTH.sensorValue + 1)))).toBe(-3);
  });

  it('over-long credentials are "not authenticated" (-1, false, a Client fault) and count no failure', async () => {
    const longUser = { SystemUser: 'u'.repeat(MAX_LENGTH.systemUser + 1), Password: 'secret-1' };
    const longPassword = credentials('acme', 'p'.repeat(MAX_LENGTH.password + 1));
    expect(codeOf((await t.soap11('LoginYInsertarEvento', xmlParams({ ...longUser, ...event() }))).text)).toBe(-1);
    for (let i = 0; i < 20; i++) expect((await t.post('Login', longPassword)).text).toContain('>false</boolean>');
    const fault = await t.soap11('LoginYObtenerComando', xmlParams(longUser));
    expect(fault.status).toBe(500);
    expect(fault.text).toContain('<faultcode>soap:Client</faultcode>');
    // Twenty over-long passwords locked nothing: the real one still works.
    expect((await t.post('Login', credentials())).text).toContain('>true</boolean>');
  });
});
