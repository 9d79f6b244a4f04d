/**
 * Moving an installation over: `npm run admin -- import providers|trips FILE` (the real CLI as a
 * child process) against the real server, and the bulk API it calls. Plus the other new CLI
 * commands end to end.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../shared/domain/passwords.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';
import { ROOT, runAdminCli, TSX } from '../helpers/admin-cli.js';

type Json = Record<string, unknown>;

describe('import and the operators CLI', () => {
  let t: TestApp;
  let dir: string;

  const cli = (...args: string[]) => runAdminCli(t.app.admin.url, t.app.adminToken, args);
  const file = (name: string, text: string): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };

  beforeAll(async () => {
    t = await TestApp.start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-import-'));
  });
  afterAll(async () => {
    await t.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('imports providers from CSV; a re-run changes nothing; a changed password is updated; bad lines fail alone with exit 1', async () => {
    const csv = file(
      'providers.csv',
      [
        'systemUser,password,timeZone,enabled,requireRegisteredVehicles',
        'acme,abc,,,', // a legacy password shorter than PASSWORD_MIN_LENGTH is kept as it is
        'bravo,secret-2,America/Argentina/Buenos_Aires,true,1',
        '"char,lie","pass""word",,no,',
        '',
        ',nopass,,,', // line 6: no SystemUser
        'delta,secret-4,Mars/Olympus,,', // line 7: no such zone
        'echo,secret-5,,maybe,', // line 8: not a boolean
        'foxtrot,secret-6', // line 9: too few fields
      ].join('\n'),
    );
    const first = await cli('import', 'providers', csv);
    expect(first.code).toBe(1);
    const summary = JSON.parse(first.out) as Json;
    expect(summary).toMatchObject({ kind: 'providers', lines: 7, created: 3, updated: 0, unchanged: 0, failed: 4 });
    expect((summary.failures as Json[]).map((f) => f.line)).toEqual([6, 7, 8, 9]);
    expect((summary.failures as Json[])[1]?.reason).toContain('Mars/Olympus');
    expect((summary.failures as Json[])[2]?.reason).toContain('enabled');
    // The imported providers log in with their legacy passwords.
    expect((await t.soap11('Login', xmlParams(credentials('acme', 'abc')))).text).toContain('>true<');
    const charlie = await t.app.backends.providers.get('char,lie');
    expect(await verifyPassword('pass"word', charlie!.passwordHash)).toBe(true);
    expect((await t.admin('GET', '/admin/providers/bravo')).json).toMatchObject({ timeZone: 'America/Argentina/Buenos_Aires', requireRegisteredVehicles: true });
    expect((await t.admin('GET', '/admin/providers/char%2Clie')).json).toMatchObject({ enabled: false });

    const again = JSON.parse((await cli('import', 'providers', csv)).out) as Json;
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 3, failed: 4 });

    const changed = file('changed.jsonl', '{"systemUser":"acme","password":"abc-new"}\n\n{"systemUser":"bravo","password":"secret-2","enabled":false}\n{"systemUser":"x"\n');
    const third = await cli('import', 'providers', changed);
    expect(third.code).toBe(1);
    expect(JSON.parse(third.out)).toMatchObject({ updated: 2, unchanged: 0, failed: 1, failures: [{ line: 4 }] });
    const acme = await t.app.backends.providers.get('acme');
    expect(await verifyPassword('abc-new', acme!.passwordHash)).toBe(true);
    expect((await t.admin('GET', '/admin/providers/bravo')).json).toMatchObject({ enabled: false });

    // A file that cannot be read as a whole imports nothing.
    const unknownColumn = await cli('import', 'providers', file('bad.csv', 'systemUser,password,color\nzed,secret-9,red\n'));
    expect(unknownColumn.code).toBe(1);
    expect(unknownColumn.err).toContain('Unknown column "color"');
    expect(await t.app.backends.providers.get('zed')).toBeNull();
  });

  it('imports trips (JSON lines and CSV), idempotently, refusing unknown providers and bad Dominios', async () => {
    const trips = file(
      'trips.csv',
      ['systemUser,dominio,nroSerie', 'acme,AA111,S1', 'acme,BB222,S2', 'nobody,CC333,S3', `acme,${'X'.repeat(40)},S4`, 'acme,AA111,S1'].join('\r\n'),
    );
    const first = await cli('import', 'trips', trips);
    expect(first.code).toBe(1);
    expect(JSON.parse(first.out)).toMatchObject({ created: 2, unchanged: 1, failed: 2, failures: [{ line: 4 }, { line: 5 }] });
    expect((JSON.parse(first.out) as { failures: { reason: string }[] }).failures[0]!.reason).toContain('nobody');
    const moved = file('moved.jsonl', '{"systemUser":"acme","dominio":"BB222","nroSerie":"S2-new"}\n{"systemUser":"acme","dominio":"AA111","nroSerie":"S1"}\n');
    const second = await cli('import', 'trips', moved);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out)).toMatchObject({ created: 0, updated: 1, unchanged: 1, failed: 0 });
    const vehicles = (await t.admin('GET', '/admin/providers/acme/trip/vehicles')).json as { vehicles: Json[] };
    expect(vehicles.vehicles.map((v) => [v.dominio, v.nroSerie])).toEqual([
      ['AA111', 'S1'],
      ['BB222', 'S2-new'],
    ]);
  });

  it('the bulk API refuses a body it cannot take at all, and more than 1000 lines', async () => {
    expect((await t.admin('POST', '/admin/import/providers', { providers: 'x' })).status).toBe(400);
    expect((await t.admin('POST', '/admin/import/trips', { trips: [{ systemUser: 'a' }] })).json).toMatchObject({ field: 'trips' });
    const many = Array.from({ length: 1001 }, (_, i) => ({ line: i + 1, systemUser: 'acme', dominio: `D${i}`, nroSerie: 'S' }));
    const r = await t.admin('POST', '/admin/import/trips', { trips: many });
    expect(r.status).toBe(400);
    expect((r.json as Json).error).toContain('1000');
    const ok = await t.admin('POST', '/admin/import/trips', { trips: many.slice(0, 1000) });
    expect(ok.status).toBe(200);
  });

  it('CLI: commands cancel and list, lockouts, providers delete, events paging and --follow', async () => {
    const queued = (await t.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'U', equipo: 'E' })).json as { numero: number };
    const cancelled = await cli('commands', 'cancel', 'acme', String(queued.numero));
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.out)).toMatchObject({ numero: queued.numero, state: 'cancelled' });
    const again = await cli('commands', 'cancel', 'acme', String(queued.numero));
    expect(again).toMatchObject({ code: 1 });
    expect(again.err).toContain('HTTP 409');
    const page = JSON.parse((await cli('commands', 'list', '--state', 'cancelled')).out) as { commands: Json[] };
    expect(page.commands.map((c) => c.numero)).toEqual([queued.numero]);
    expect(JSON.parse((await cli('lockouts', 'list')).out)).toEqual({ lockouts: [] });
    expect((await cli('lockouts', 'lift', 'acme')).code).toBe(0);

    const deleteWithoutConfirm = await cli('providers', 'delete', 'char,lie', '--confirm', 'acme');
    expect(deleteWithoutConfirm.code).toBe(1);
    expect(JSON.parse((await cli('providers', 'delete', 'char,lie', '--confirm', 'char,lie')).out)).toMatchObject({ deleted: 'char,lie' });

    const follow = spawn(TSX, ['cli/admin.ts', '--json', '--url', t.app.admin.url, '--token', t.app.adminToken, 'events', '--follow', '--provider', 'acme'], { cwd: ROOT });
    let out = '';
    follow.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => follow.on('exit', resolve));
    // The CLI is subscribed once the server counts its stream.
    for (let i = 0; i < 200 && (t.app.backends.feed as unknown as { size: number }).size === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials('acme', 'abc-new'), ...event({ Codigo: 'followed' }) }));
    for (let i = 0; i < 200 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 50));
    follow.kill('SIGINT');
    expect(await exited).toBe(0);
    const line = JSON.parse(out.split('\n')[0] ?? '') as Json;
    expect(line).toMatchObject({ systemUser: 'acme', codigo: 'followed' });

    const first = JSON.parse((await cli('events', '--provider', 'acme', '--limit', '1')).out) as { events: Json[]; nextBeforeId: string };
    expect(first.events[0]?.codigo).toBe('followed');
    expect((await cli('events', '--before-id', 'abc')).code).toBe(1);
  });
});
