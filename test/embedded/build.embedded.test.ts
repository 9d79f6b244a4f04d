/**
 * `npm start` builds before it starts (its prestart): only what changed. TypeScript through
 * `tsc -b` (its build info in dist/), the console through console/build.ts, which keeps a build
 * made from the same inputs (their digest beside it). That a second `npm start` rebuilds nothing
 * is checked where npm start runs as the README has it: docs-as-written.embedded.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.js';

const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'console-build-'));
afterAll(() => fs.rmSync(temp, { recursive: true, force: true }));

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
