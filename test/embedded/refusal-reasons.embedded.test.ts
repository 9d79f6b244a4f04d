/**
 * Every refusal of a provider's call has a reason an operator can find (gateway/service/refusals.ts):
 * GET /admin/refusals (and the CLI on top of it) lists the latest, newest first, each with its
 * operation, answer, address and reason, from every front-end thread; the log has one line per
 * SystemUser a minute at most, at the default level. No password, no body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';
import { runAdminCli } from '../helpers/admin-cli.js';

interface Refusal {
  at: string;
  systemUser: string | null;
  operation: string;
  answer: string;
  reason: string;
  address: string;
}

let t: TestApp;
beforeAll(async () => {
  t = await TestApp.start({ RATE_LIMIT_EVENTS_PER_SECOND: '2' });
  await t.provider('acme', 'secret-1');
  await t.provider('fleet', 'secret-1', { requireRegisteredVehicles: true });
});
afterAll(() => t.stop());

/** Each call a millisecond after the last: the newest-first order across front-end threads goes by time. */
const post = (op: string, form: Record<string, string>) => {
  t.advance(1);
  return t.post(op, form);
};
const soap = (op: string, body: string) => {
  t.advance(1);
  return t.soap11(op, body);
};

async function refusals(query = ''): Promise<Refusal[]> {
  const { status, json } = await t.admin('GET', `/admin/refusals${query}`);
  expect(status).toBe(200);
  return (json as { refusals: Refusal[] }).refusals;
}

const latest = async (systemUser: string): Promise<Refusal> => (await refusals(`?provider=${systemUser}&limit=1`))[0]!;

describe('the reason of each refusal', () => {
  it('-3 for a date that is no dateTime names the field and the value', async () => {
    const reply = await post('LoginYInsertarEvento', { ...credentials(), ...event({ FechaHoraEvento: 'yesterday' }) });
    expect(reply.text).toContain('>-3<');
    expect(await latest('acme')).toMatchObject({
      systemUser: 'acme',
      operation: 'LoginYInsertarEvento',
      answer: '-3',
      reason: 'FechaHoraEvento "yesterday" is not a dateTime (xs:dateTime, e.g. 2026-11-22T08:59:30-03:00)',
      address: '127.0.0.1',
    });
  });

  it('-3 for a value over its limit, -3 for an empty Dominio, and in a batch each refused event with its position', async () => {
    await post('LoginYInsertarEvento', { ...credentials(), ...event({ Dominio: 'X'.repeat(40) }) });
    expect((await latest('acme')).reason).toBe('Dominio is 40 characters; the limit is 32');
    await post('LoginYInsertarEvento', { ...credentials(), ...event({ Dominio: '  ' }) });
    expect((await latest('acme')).reason).toBe('Dominio is empty');
    t.advance(5_000);
    const batch = await soap('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos><pEvento>${xmlParams(event({ Codigo: 'b1' }))}</pEvento><pEvento>${xmlParams(event({ FechaHoraRecepcion: '2026-13-01T00:00:00' }))}</pEvento></Eventos>`);
    expect(batch.text).toMatch(/<int>\d+<\/int><int>-3<\/int>/);
    expect(await latest('acme')).toMatchObject({ operation: 'LoginYInsertarEventos', answer: '-3', reason: 'event 2 of 2: FechaHoraRecepcion "2026-13-01T00:00:00" is not a dateTime (xs:dateTime, e.g. 2026-11-22T08:59:30-03:00)' });
  });

  it('-1 and false say which: wrong password, unknown SystemUser, disabled provider; never the password', async () => {
    await post('LoginYInsertarEvento', { ...credentials('acme', 'not-the-password'), ...event() });
    expect(await latest('acme')).toMatchObject({ answer: '-1', reason: expect.stringMatching(/^wrong password/) as unknown });
    t.advance(1);
    await t.get('Login', credentials('acme2', 'secret-1'));
    expect(await latest('acme2')).toMatchObject({ operation: 'Login', answer: 'false', reason: 'no provider has this SystemUser' });
    await t.provider('paused', 'secret-1');
    expect((await t.admin('PATCH', '/admin/providers/paused', { enabled: false })).status).toBe(200);
    await post('LoginYInsertarEvento', { ...credentials('paused'), ...event() });
    expect(await latest('paused')).toMatchObject({ answer: '-1', reason: 'the provider is disabled' });
    expect(JSON.stringify(await refusals())).not.toMatch(/not-the-password|secret-1/);
  });

  it('-4, -6 and a false of the command operations give theirs', async () => {
    t.advance(5_000);
    await post('LoginYInsertarEvento', { ...credentials('fleet'), ...event({ Dominio: 'ZZ999ZZ' }) });
    expect(await latest('fleet')).toMatchObject({ answer: '-4', reason: 'Dominio "ZZ999ZZ" is on no trip of this provider, which accepts registered vehicles only' });
    t.advance(5_000);
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await post('LoginYInsertarEvento', { ...credentials(), ...event({ Codigo: `r${i}` }) })).text);
    expect(codes.join()).toContain('>-6<');
    expect(await latest('acme')).toMatchObject({ answer: '-6', reason: 'over RATE_LIMIT_EVENTS_PER_SECOND (2 events a second for this provider)' });
    await post('LoginYComandoProcesado', { ...credentials(), NUMERO: '77', correcto: 'true' });
    expect(await latest('acme')).toMatchObject({ operation: 'LoginYComandoProcesado', answer: 'false', reason: expect.stringMatching(/^NUMERO 77 is no command delivered to this provider/) as unknown });
  });

  it('a session call without a session, and a value no binding can read (a fault naming no SystemUser)', async () => {
    await soap('InsertarEvento', xmlParams(event()));
    const none = (await refusals()).find((r) => r.operation === 'InsertarEvento');
    expect(none).toMatchObject({ systemUser: null, answer: '-2', reason: expect.stringMatching(/^no live session: call Login first/) as unknown });
    // HTTP POST form: InsertarEvento declares Rumbo, which a form must send.
    const missing = await post('InsertarEvento', event());
    expect(missing.status).toBe(500);
    const unread = (await refusals()).find((r) => r.operation === 'InsertarEvento' && r.answer === 'HTTP 500');
    expect(unread).toMatchObject({ systemUser: null, reason: 'Missing parameter: Rumbo.' });
  });
});

describe('where an operator sees them', () => {
  it('the CLI prints each refusal with its reason', async () => {
    const run = await runAdminCli(t.app.admin.url, t.app.adminToken, ['refusals', '--provider', 'acme2']);
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ refusals: [{ systemUser: 'acme2', reason: 'no provider has this SystemUser' }] });
  });

  it('the log has one line per SystemUser and front-end thread a minute, then how many more', async () => {
    const lines = t.logs.join('').split('\n').filter((l) => l.includes('"refused ') && l.includes('"systemUser":"acme"'));
    const refusedOfAcme = (await refusals('?provider=acme')).length;
    expect(refusedOfAcme).toBeGreaterThan(6);
    // Two front-end threads: at most one line each within the minute this test takes.
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines.join()).not.toContain('secret-1');
    t.advance(61_000);
    await post('LoginYInsertarEvento', { ...credentials(), ...event({ FechaHoraEvento: 'later' }) });
    await post('LoginYInsertarEvento', { ...credentials(), ...event({ FechaHoraEvento: 'later' }) });
    const after = t.logs.join('').split('\n').filter((l) => l.includes('"refused ') && l.includes('"systemUser":"acme"'));
    expect(after.length).toBeGreaterThan(lines.length);
    expect(after.slice(lines.length).join()).toMatch(/"refusedMeanwhile":\d+/);
  });
});
