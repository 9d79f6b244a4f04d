/**
 * `npm start` builds before it starts (its prestart): only what changed. TypeScript through
 * `tsc -b` (its build info in dist/), the console through console/build.ts, which keeps a build
 * made from the same inputs (their digest beside it).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.js';
import { REPO as ROOT } from '../helpers/paths.js';

const run = promisify(execFile);
const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'console-build-'));
afterAll(() => fs.rmSync(temp, { recursive: true, force: true }));

const mtimes = (files: readonly string[]): number[] => files.map((f) => fs.statSync(path.join(ROOT, f)).mtimeMs);

describe('npm run build', () => {
  it('a second build with nothing changed rewrites nothing', async () => {
    await run('npm', ['run', '--silent', 'build'], { cwd: ROOT });
    const html = fs.readFileSync(path.join(ROOT, 'dist', 'console', 'index.html'), 'utf8');
    const script = /\/console\/(main-[^"]+\.js)/.exec(html)?.[1];
    expect(script).toBeDefined();
    const outputs = ['dist/main.js', 'dist/gateway/app.js', 'dist/console/index.html', `dist/console/${script!}`];
    const before = mtimes(outputs);
    const { stdout } = await run('npm', ['run', '--silent', 'build'], { cwd: ROOT });
    expect(stdout).toContain('up to date with its sources');
    expect(mtimes(outputs)).toEqual(before);
  });
});

describe('buildConsole', () => {
  it('builds again when an input changed, and only then', async () => {
    const inputs = path.join(temp, 'inputs');
    fs.mkdirSync(inputs);
    fs.writeFileSync(path.join(inputs, 'a.txt'), 'one');
    const out = path.join(temp, 'out');
    expect((await buildConsole(out, { inputs: [inputs] })).rebuilt).toBe(true);
    const kept = await buildConsole(out, { inputs: [inputs] });
    expect(kept.rebuilt).toBe(false);
    expect(kept.files.map((f) => f.name)).toContain('index.html');
    expect(kept.firstLoadGzipBytes).toBeGreaterThan(0);
    fs.writeFileSync(path.join(inputs, 'a.txt'), 'two');
    expect((await buildConsole(out, { inputs: [inputs] })).rebuilt).toBe(true);
    // A build missing a file it names is no build.
    fs.rmSync(path.join(out, 'index.html.gz'));
    expect((await buildConsole(out, { inputs: [inputs] })).rebuilt).toBe(true);
  });
});
