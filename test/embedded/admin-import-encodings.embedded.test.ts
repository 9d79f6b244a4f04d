/**
 * Imports as operators have them: legacy exports in Windows-1252 or Latin-1, files with
 * a BOM, bytes the declared encoding cannot have (refused with line and column, never stored as
 * U+FFFD), and a report file with every line's outcome while the summary stays short. The real
 * CLI as a child process against the real server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../shared/domain/passwords.js';
import { TestApp } from '../helpers/harness.js';
import { runAdminCli } from '../helpers/admin-cli.js';

type Json = Record<string, unknown>;

/** "contraseña1" as a Windows-1252 (and Latin-1) export writes it: ñ is the single byte 0xF1. */
const LEGACY_PASSWORD = Buffer.concat([Buffer.from('contrase'), Buffer.from([0xf1]), Buffer.from('a1')]);

describe('import encodings and reports', () => {
  let t: TestApp;
  let dir: string;

  const cli = (...args: string[]) => runAdminCli(t.app.admin.url, t.app.adminToken, args);
  const file = (name: string, bytes: Buffer | string): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, bytes);
    return p;
  };
  const passwordOf = async (systemUser: string): Promise<string> => (await t.app.backends.providers.get(systemUser))?.passwordHash ?? '';

  beforeAll(async () => {
    t = await TestApp.start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-import-enc-'));
  });
  afterAll(async () => {
    await t.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a Windows-1252 export is detected, and its provider logs in with its real password', async () => {
    const csv = file('legacy.csv', Buffer.concat([Buffer.from('systemUser,password\r\nlegacy1,'), LEGACY_PASSWORD, Buffer.from('\r\n')]));
    const r = await cli('import', 'providers', csv);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ encoding: 'windows-1252', created: 1, failed: 0 });
    expect(await verifyPassword('contraseña1', await passwordOf('legacy1'))).toBe(true);
  });

  it('--encoding latin1 and windows-1252 are honoured as declared', async () => {
    // 0x80 is € in Windows-1252 and a C1 control in Latin-1 (refused by the API as a control character).
    const bytes = Buffer.concat([Buffer.from('systemUser,password\nlatin1a,'), LEGACY_PASSWORD, Buffer.from('\neuro1,pre'), Buffer.from([0x80]), Buffer.from('cio1\n')]);
    const latin = await cli('import', 'providers', file('declared.csv', bytes), '--encoding', 'latin1');
    expect(JSON.parse(latin.out)).toMatchObject({ encoding: 'latin1', created: 1, failed: 1, failures: [{ line: 3 }] });
    expect(await verifyPassword('contraseña1', await passwordOf('latin1a'))).toBe(true);
    const cp = await cli('import', 'providers', file('declared2.csv', bytes), '--encoding', 'windows-1252');
    expect(JSON.parse(cp.out)).toMatchObject({ encoding: 'windows-1252', created: 1, unchanged: 1, failed: 0 });
    expect(await verifyPassword('pre€cio1', await passwordOf('euro1'))).toBe(true);
    expect((await cli('import', 'providers', file('x.csv', 'systemUser,password\n'), '--encoding', 'ebcdic')).code).not.toBe(0);
  });

  it('bytes invalid in the declared encoding fail their line with line and column; nothing is stored altered', async () => {
    const bytes = Buffer.concat([Buffer.from('systemUser,password\ngood1,secret-1\nbad1,'), LEGACY_PASSWORD, Buffer.from('\n')]);
    const r = await cli('import', 'providers', file('mixed.csv', bytes), '--encoding', 'utf-8');
    expect(r.code).toBe(1);
    const summary = JSON.parse(r.out) as { failures: { line: number; reason: string }[] } & Json;
    expect(summary).toMatchObject({ encoding: 'utf-8', created: 1, failed: 1 });
    expect(summary.failures[0]?.line).toBe(3);
    expect(summary.failures[0]?.reason).toMatch(/byte 0xf1 at line 3, column 14 is not valid UTF-8.*--encoding windows-1252/);
    expect(await t.app.backends.providers.get('bad1')).toBeNull();
    // Windows-1252 leaves five bytes undefined: those are refused too.
    const undefinedByte = Buffer.concat([Buffer.from('systemUser,password\nbad2,pass'), Buffer.from([0x81]), Buffer.from('word\n')]);
    const r2 = await cli('import', 'providers', file('cp.csv', undefinedByte), '--encoding', 'windows-1252');
    expect((JSON.parse(r2.out) as { failures: { reason: string }[] }).failures[0]?.reason).toMatch(/0x81 at line 2, column 10/);
    expect(await t.app.backends.providers.get('bad2')).toBeNull();
  });

  it('a BOM decides: UTF-8 and UTF-16LE files import as written', async () => {
    const utf8 = file('bom8.csv', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('systemUser,password\nbom8,contraseña1\n')]));
    expect(JSON.parse((await cli('import', 'providers', utf8)).out)).toMatchObject({ encoding: 'utf-8', created: 1 });
    expect(await verifyPassword('contraseña1', await passwordOf('bom8'))).toBe(true);
    const utf16 = file('bom16.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('systemUser,password\r\nbom16,contraseña1\r\n', 'utf16le')]));
    expect(JSON.parse((await cli('import', 'providers', utf16)).out)).toMatchObject({ encoding: 'utf-16le', created: 1 });
    expect(await verifyPassword('contraseña1', await passwordOf('bom16'))).toBe(true);
  });

  it('the summary shows the first 100 failures; the report file has every line', async () => {
    const rows = ['systemUser,dominio,nroSerie'];
    for (let i = 0; i < 150; i++) rows.push(`nobody,D${i},S`);
    rows.push('legacy1,OK1,S', '"legacy1","multi', 'line",S');
    const csv = file('many.csv', rows.join('\n'));
    const reportFile = path.join(dir, 'many-report.jsonl');
    const r = await cli('import', 'trips', csv, '--report', reportFile);
    const summary = JSON.parse(r.out) as { failures: unknown[] } & Json;
    expect(summary).toMatchObject({ lines: 152, created: 1, failed: 151, report: reportFile });
    expect(summary.failures).toHaveLength(100);
    const report = fs.readFileSync(reportFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { line: number; outcome: string });
    expect(report).toHaveLength(152);
    expect(report.filter((e) => e.outcome === 'failed').map((e) => e.line).sort((a, b) => a - b)).toEqual([...Array.from({ length: 150 }, (_, i) => i + 2), 153]);
    expect(report.find((e) => e.outcome === 'created')?.line).toBe(152);
    expect(fs.statSync(reportFile).mode & 0o777).toBe(0o600);
  });

  it('a quoted value going on after its closing quote stops the import there: the records before it are sent and reported, none after', async () => {
    const csv = file('stop.csv', 'systemUser,dominio,nroSerie\nlegacy1,STOP1,S\n"legacy1"x,STOP2,S\nlegacy1,STOP3,S\n');
    const reportFile = path.join(dir, 'stop-report.jsonl');
    const r = await cli('import', 'trips', csv, '--report', reportFile);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/Line 3, field 1: a quoted value goes on after its closing quote.*Lines sent: 1/);
    const vehicles = ((await t.admin('GET', '/admin/providers/legacy1/trip/vehicles')).json as { vehicles: Json[] }).vehicles.map((v) => v.dominio);
    expect(vehicles).toContain('STOP1');
    expect(vehicles).not.toContain('STOP3');
    expect(fs.readFileSync(reportFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json)).toEqual([{ line: 2, outcome: 'created' }]);
  });
});
