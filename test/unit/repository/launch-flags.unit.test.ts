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
const npmStartFlags = (): string[] => nodeFlags(scripts().start!.split(' '), 'dist/main.js');

describe('launch flags', () => {
  it('are the same for npm start, npm run gateway, the Docker image and the compose file', () => {
    const npmStart = npmStartFlags();
    expect(nodeFlags(scripts().gateway!.split(' '), 'dist/gateway/main.js')).toEqual(npmStart);
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(cmd).toBeDefined();
    expect(nodeFlags(JSON.parse(cmd!) as string[], 'dist/main.js')).toEqual(npmStart);
    // merge: the second gateway takes the first one's settings through `<<: *gateway`, as Compose reads it.
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { command?: string[] }> };
    const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith('gateway'));
    expect(gateways.length).toBeGreaterThan(0);
    for (const [, service] of gateways) expect(nodeFlags(service.command ?? [], 'dist/gateway/main.js')).toEqual(npmStart);
  });

  it('start the young generation at its full 64 MB on this Node.js', () => {
    const npmStart = npmStartFlags();
    expect(npmStart).toEqual(expect.arrayContaining(['--max-semi-space-size=64', '--min-semi-space-size=64']));
    // Node refuses an unknown flag; V8 takes a known one at its word, so ask V8 what it did.
    const newSpaceMb = execFileSync(process.execPath, [...npmStart, '-e', "const s = require('v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); process.stdout.write(String(s.space_size / 1048576))"], { encoding: 'utf8' });
    expect(Number(newSpaceMb)).toBe(64);
  });
});
