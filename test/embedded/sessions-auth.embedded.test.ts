/** Sessions, lockout and password changes (docs/protocol.md §Sessions, §Lockout, §Authentication and passwords), over the real server. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { credentials, event, sessionCookie, TestApp, xmlParams } from '../helpers/harness.js';
import { faultstring } from '../helpers/client-errors.js';

const minute = 60_000;

describe('sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ SESSION_TIMEOUT_MINUTES: '20' });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('a new random id at every successful Login', async () => {
    const a = sessionCookie(await t.soap11('Login', xmlParams(credentials())));
    const b = sessionCookie(await t.soap11('Login', xmlParams(credentials())));
    expect(a).not.toBe(b);
    const failed = await t.soap11('Login', xmlParams(credentials('acme', 'wrong')));
    expect(failed.setCookie).toBeNull();
  });

  it('operations without credentials use the cookie; without a live session they refuse', async () => {
    const cookie = sessionCookie(await t.get('Login', credentials()));
    expect((await t.soap11('InSession', '', undefined, cookie)).text).toContain('<InSessionResult>true</InSessionResult>');
    expect((await t.soap11('InSession', '')).text).toContain('<InSessionResult>false</InSessionResult>');

    const withSession = await t.soap11('InsertarEvento', xmlParams({ ...event(), Rumbo: '90', Crudo: 'raw' }), undefined, cookie);
    expect(withSession.text).toMatch(/<InsertarEventoResult>[1-9]\d*</);
    const stored = (await t.app.backends.events.recent({ provider: 'acme', limit: 1 }))[0]!;
    expect(stored.rumbo).toBe(90);
    expect(stored.crudo).toBe('raw');

    expect((await t.soap11('InsertarEvento', xmlParams(event()))).text).toContain('<InsertarEventoResult>-2</InsertarEventoResult>');
    expect((await t.post('InsertarEvento', { ...event(), Rumbo: '0', Crudo: '' })).text).toContain('>-2</int>');
    expect((await t.soap11('ComandoProcesado', '<NUMERO>1</NUMERO><correcto>true</correcto>')).text).toContain('>false<');
    expect((await t.soap11('EstadoComando', '<NUMERO>1</NUMERO><MSG>x</MSG>')).text).toContain('>false<');
    expect((await t.soap11('CambiarClave', '<AntiguaClave>secret-1</AntiguaClave><NuevaClave>secret-2</NuevaClave>')).text).toContain('>false<');
    const fault = await t.soap11('ObtenerComando', '');
    expect(fault.status).toBe(500);
    expect(fault.text).toContain(faultstring('noSession'));
  });

  it('sliding expiry: each use extends the session; idle past the timeout ends it', async () => {
    const cookie = sessionCookie(await t.soap11('Login', xmlParams(credentials())));
    t.advance(15 * minute);
    expect((await t.soap11('InSession', '', undefined, cookie)).text).toContain('>true<');
    t.advance(15 * minute); // 30 min after login but only 15 after last use
    expect((await t.soap11('InSession', '', undefined, cookie)).text).toContain('>true<');
    t.advance(20 * minute + 1);
    expect((await t.soap11('InSession', '', undefined, cookie)).text).toContain('>false<');
  });

  it('Logout ends a live session once', async () => {
    const cookie = sessionCookie(await t.soap11('Login', xmlParams(credentials())));
    expect((await t.soap11('Logout', '', undefined, cookie)).text).toContain('<LogoutResult>true</LogoutResult>');
    expect((await t.soap11('Logout', '', undefined, cookie)).text).toContain('<LogoutResult>false</LogoutResult>');
    expect((await t.soap11('InSession', '', undefined, cookie)).text).toContain('>false<');
  });

  it('Login-prefixed operations neither need nor set the cookie', async () => {
    const r = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: 'stateless' }) }));
    expect(r.text).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*</);
    expect(r.setCookie).toBeNull();
  });
});

describe('lockout and passwords', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await TestApp.start({ LOCKOUT_MAX_FAILURES: '10', LOCKOUT_WINDOW_MINUTES: '15', LOCKOUT_MINUTES: '15' });
    await t.provider('acme', 'secret-1');
  });
  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when no test ran, so beforeEach never did
    await t?.stop();
  });

  it('10 failures within 15 minutes lock the user for 15 minutes, even with the right password', async () => {
    for (let i = 0; i < 9; i++) expect((await t.soap11('Login', xmlParams(credentials('acme', `bad${i}`)))).text).toContain('>false<');
    expect((await t.soap11('Login', xmlParams(credentials()))).text).toContain('>true<');
    await t.soap11('Login', xmlParams(credentials('acme', 'bad9')));
    expect((await t.soap11('Login', xmlParams(credentials()))).text).toContain('>false<');
    expect((await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event() }))).text).toContain('>-1<');
    t.advance(15 * minute + 1);
    expect((await t.soap11('Login', xmlParams(credentials()))).text).toContain('>true<');
    await t.stop();
  });

  it('failures spread beyond the window do not lock', async () => {
    for (let i = 0; i < 12; i++) {
      await t.soap11('Login', xmlParams(credentials('acme', 'bad')));
      t.advance(2 * minute);
    }
    expect((await t.soap11('Login', xmlParams(credentials()))).text).toContain('>true<');
    await t.stop();
  });

  it('LoginYCambiarClave: true only when changed; the old password stops working at once', async () => {
    const change = (password: string, nueva: string) =>
      t.soap11('LoginYCambiarClave', xmlParams({ ...credentials('acme', password), NuevaClave: nueva }));
    expect((await change('wrong', 'secret-2')).text).toContain('>false<');
    expect((await change('secret-1', 'short')).text).toContain('>false<'); // policy: 6 chars
    expect((await change('secret-1', 'secret-1')).text).toContain('>false<'); // must differ
    expect((await change('secret-1', 'secret-2')).text).toContain('<LoginYCambiarClaveResult>true</LoginYCambiarClaveResult>');
    // The old password was verified (and cached) above; the cache must not keep it alive.
    expect((await t.soap11('Login', xmlParams(credentials('acme', 'secret-1')))).text).toContain('>false<');
    expect((await t.soap11('Login', xmlParams(credentials('acme', 'secret-2')))).text).toContain('>true<');
    await t.stop();
  });

  it('CambiarClave with a session checks AntiguaClave', async () => {
    const cookie = sessionCookie(await t.soap11('Login', xmlParams(credentials())));
    const change = (old: string, nueva: string) =>
      t.soap11('CambiarClave', xmlParams({ AntiguaClave: old, NuevaClave: nueva }), undefined, cookie);
    expect((await change('nope', 'secret-3')).text).toContain('>false<');
    expect((await change('secret-1', 'secret-3')).text).toContain('<CambiarClaveResult>true</CambiarClaveResult>');
    expect((await t.get('Login', credentials('acme', 'secret-3'))).text).toContain('>true<');
    await t.stop();
  });

  it('a disabled provider gets false / -1 and its sessions stop working', async () => {
    const cookie = sessionCookie(await t.soap11('Login', xmlParams(credentials())));
    await t.app.backends.providers.update('acme', { enabled: false }, t.now);
    expect((await t.soap11('Login', xmlParams(credentials()))).text).toContain('>false<');
    expect((await t.soap11('InsertarEvento', xmlParams(event()), undefined, cookie)).text).toContain('>-2<');
    await t.stop();
  });
});
