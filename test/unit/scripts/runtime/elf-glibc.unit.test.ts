/**
 * scripts/runtime/elf-glibc.mjs against the real thing: the pristine uWebSockets.js binary of the
 * locked version (from npm's cache, as `npm install` fetched it), checked by binutils' objdump, an
 * independent ELF reader, and loaded with every symbol bound at once (LD_BIND_NOW) on this
 * machine's glibc 2.36 (Debian 12).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { glibcNeeds, lowerGlibcNeeds } from '../../../../scripts/runtime/elf-glibc.mjs';
import { REPO } from '../../../helpers/paths.js';

const lower = lowerGlibcNeeds;
const needs = glibcNeeds;

const BINARY = `uws_linux_x64_${process.versions.modules}.node`;
const installed = path.join(REPO, 'node_modules', 'uWebSockets.js');
let dir: string;
let pristine: Buffer;

/** What objdump says the file needs of glibc: `symbol@version` for every versioned import. */
function objdumpImports(file: string): string[] {
  const out = execFileSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out
    .split('\n')
    .map((line) => /\*UND\*\s+\S+\s+(?:\((GLIBC_[\d.]+)\)|Base)\s+(\S+)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => `${m[2]!}@${m[1] ?? 'unversioned'}`);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'elf-glibc-'));
  const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
  const version = lock.packages['node_modules/uWebSockets.js']!.version;
  execFileSync('npm', ['pack', '--prefer-offline', '--silent', '--pack-destination', dir, `@btc-vision/uwebsockets.js@${version}`], { stdio: 'ignore' });
  execFileSync('tar', ['-xzf', path.join(dir, `btc-vision-uwebsockets.js-${version}.tgz`), '-C', dir]);
  pristine = readFileSync(path.join(dir, 'package', BINARY));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('lowering a binary built on glibc 2.38 to 2.36', () => {
  it('the published binary needs glibc 2.38 for the three C23 functions only', () => {
    const imports = objdumpImports(path.join(dir, 'package', BINARY));
    expect(imports.filter((i) => i.endsWith('@GLIBC_2.38')).sort()).toEqual(['__isoc23_sscanf@GLIBC_2.38', '__isoc23_strtol@GLIBC_2.38', '__isoc23_strtoul@GLIBC_2.38']);
    expect(needs(pristine, [2, 36]).beyond.map((b) => b.symbol).sort()).toEqual(['__isoc23_sscanf', '__isoc23_strtol', '__isoc23_strtoul']);
  });

  it('rebinds them to their older equivalents, unversioned, and needs nothing newer than 2.36 after', () => {
    const buf = Buffer.from(pristine);
    const rebound = lower(buf, [2, 36]).map((r) => `${r.symbol} -> ${r.now}`);
    expect(rebound.sort()).toEqual(['__isoc23_sscanf -> __isoc99_sscanf', '__isoc23_strtol -> strtol', '__isoc23_strtoul -> strtoul']);
    const file = path.join(dir, 'lowered.node');
    writeFileSync(file, buf);
    const imports = objdumpImports(file);
    expect(imports.filter((i) => /@GLIBC_2\.(3[7-9]|[4-9]\d)/.test(i))).toEqual([]);
    expect(imports).toEqual(expect.arrayContaining(['__isoc99_sscanf@unversioned', 'strtol@unversioned', 'strtoul@unversioned']));
    expect(imports.some((i) => i.startsWith('__isoc23_'))).toBe(false);
    // Only the symbol table, version table and two bytes of the string table change: the same size, few bytes.
    expect(buf.length).toBe(pristine.length);
    let changed = 0;
    for (let i = 0; i < buf.length; i++) if (buf[i] !== pristine[i]) changed++;
    expect(changed).toBeGreaterThan(0);
    expect(changed).toBeLessThan(40);
    // A second pass finds nothing to do.
    expect(lower(buf, [2, 36])).toEqual([]);
  });

  it('is what `npm install` left in node_modules, byte for byte', () => {
    const buf = Buffer.from(pristine);
    lower(buf, [2, 36]);
    const digest = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    expect(digest(readFileSync(path.join(installed, BINARY)))).toBe(digest(buf));
  });

  it('loads with every symbol bound at once on this glibc, and serves a request', () => {
    const buf = Buffer.from(pristine);
    lower(buf, [2, 36]);
    writeFileSync(path.join(dir, 'package', BINARY), buf);
    const probe = `
      const uws = require(${JSON.stringify(path.join(dir, 'package'))});
      const app = uws.App().get('/*', (res) => res.end('native'));
      app.listen('127.0.0.1', 0, async (token) => {
        const port = uws.us_socket_local_port(token);
        const text = await (await fetch('http://127.0.0.1:' + port + '/')).text();
        process.stdout.write(text);
        process.exit(0);
      });`;
    const out = execFileSync(process.execPath, ['-e', probe], { env: { ...process.env, LD_BIND_NOW: '1' }, encoding: 'utf8', timeout: 20_000 });
    expect(out).toBe('native');
  });

  it('refuses, changing nothing, when something else needs the newer glibc', () => {
    const buf = Buffer.from(pristine);
    // Aimed at 2.35, the binary's 2.36 imports (arc4random...) are beyond the target too, and
    // they are not C23 variants with an older twin.
    expect(needs(buf, [2, 35]).beyond.map((b) => b.symbol)).toContain('arc4random');
    const before = createHash('sha256').update(buf).digest('hex');
    expect(() => lower(buf, [2, 35])).toThrow(/no older equivalent known, cannot lower/);
    expect(createHash('sha256').update(buf).digest('hex')).toBe(before);
  });
});
