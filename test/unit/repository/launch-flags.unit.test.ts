import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO } from '../../helpers/paths.js';

/**
 * The gateway is tuned for the Node.js flags its own launchers pass (docs/running.md §Operating it, "Memory"):
 * `npm start`, `npm run gateway`, the Docker image and the compose file. They are written in four
 * places, so they are held to one another here, and to what this Node.js does with them.
 */
const ROOT = REPO;
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

/** The `--` flags of a node command line (given as its words) before `script`. */
function nodeFlags(words: readonly string[], script: string): string[] {
  expect(words[0]).toBe('node');
  expect(words[words.length - 1]).toBe(script);
  return words.slice(1, -1);
}

const scripts = (): Record<string, string> => (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
/** An npm script's leading NAME=value words (its environment) and the rest (the command). */
function splitScript(line: string): { env: string[]; words: string[] } {
  const words = line.split(' ');
  const first = words.findIndex((w) => !/^[A-Z_]+=/.test(w));
  return { env: words.slice(0, first), words: words.slice(first) };
}
const npmStartFlags = (): string[] => nodeFlags(splitScript(scripts().start!).words, 'dist/main.js');
const TUNABLES = 'GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4194304';

describe('launch flags', () => {
  it('are the same for npm start, npm run gateway, the Docker image and the compose file', () => {
    const npmStart = npmStartFlags();
    expect(nodeFlags(splitScript(scripts().gateway!).words, 'dist/gateway/main.js')).toEqual(npmStart);
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(cmd).toBeDefined();
    expect(nodeFlags(JSON.parse(cmd!) as string[], 'dist/main.js')).toEqual(npmStart);
    // merge: the second gateway takes the first one's settings through `<<: *gateway`, as Compose reads it.
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { command?: string[] }> };
    const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith('gateway'));
    expect(gateways.length).toBeGreaterThan(0);
    for (const [, service] of gateways) expect(nodeFlags(service.command ?? [], 'dist/gateway/main.js')).toEqual(npmStart);
  });

  it("set glibc's mmap threshold in the environment of npm start, npm run gateway and the image (the compose gateways build the image)", () => {
    expect(splitScript(scripts().start!).env).toEqual([TUNABLES]);
    expect(splitScript(scripts().gateway!).env).toEqual([TUNABLES]);
    expect(read('Dockerfile').split('\n')).toContain(`ENV ${TUNABLES}`);
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { build?: string }> };
    for (const [name, service] of Object.entries(compose.services)) if (name.startsWith('gateway')) expect(service.build).toBe('.');
  });

  it('the threshold is one glibc takes: a 16 MB block freed in a thread goes back to the kernel, where without it the thread keeps it', () => {
    // scrypt's work area (N=16384, r=8) in libuv's threads, as a password check allocates it.
    const probe = `const rssMb = () => Number(require('node:fs').readFileSync('/proc/self/status', 'utf8').match(/VmRSS:\\s+(\\d+)/)[1]) / 1024;
      const round = (then) => { let left = 4; for (let i = 0; i < 4; i++) require('node:crypto').scrypt('pw', 'salt', 32, { N: 16384, r: 8, p: 1, maxmem: 64 * 2 ** 20 }, () => { if (--left === 0) then(); }); };
      // The first block is mapped by itself (glibc's threshold starts at 128 KB) and its free raises the
      // threshold past 16 MB: from then on such blocks come from the thread's arena, and stay there.
      const before = rssMb();
      round(() => round(() => round(() => process.stdout.write(String(rssMb() - before)))));`;
    const grownMb = (env: Record<string, string>): number => Number(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8', env: { ...process.env, ...env } }));
    const [name, value] = [TUNABLES.slice(0, TUNABLES.indexOf('=')), TUNABLES.slice(TUNABLES.indexOf('=') + 1)];
    const { GLIBC_TUNABLES: _, ...without } = process.env;
    expect(grownMb({ ...without, GLIBC_TUNABLES: '' })).toBeGreaterThan(30);
    expect(grownMb({ [name]: value })).toBeLessThan(10);
  });

  it('start the young generation at its full 64 MB on this Node.js', () => {
    const npmStart = npmStartFlags();
    expect(npmStart).toEqual(expect.arrayContaining(['--max-semi-space-size=64', '--min-semi-space-size=64']));
    // Node refuses an unknown flag; V8 takes a known one at its word, so ask V8 what it did.
    const newSpaceMb = execFileSync(process.execPath, [...npmStart, '-e', "const s = require('v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); process.stdout.write(String(s.space_size / 1048576))"], { encoding: 'utf8' });
    expect(Number(newSpaceMb)).toBe(64);
  });
});
