/**
 * The Dockerfile, replayed without Docker (no engine runs on these machines): its build stage's
 * COPY and RUN lines, literally, in an empty directory standing for /app, on the Node.js the image
 * uses (.node-version, held to the FROM lines by test/unit/repository/runtime.unit.test.ts); then
 * the final stage's file set, started with its CMD, serving a SOAP insert. What this cannot see is
 * the base image itself; what it does see is a missing COPY, an install step that needs a tool the
 * slim image lacks (nothing may compile), and a build that does not run from the copied files.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { credentials, event, soap11Envelope, xmlParams } from '../helpers/harness.js';
import { REPO } from '../helpers/paths.js';
import { startNode, type Proc } from '../helpers/processes.js';

interface Instruction {
  op: string;
  args: string;
}

/** The stages of the Dockerfile, each its instructions (continuation lines joined, comments dropped). */
function stages(): Instruction[][] {
  const text = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const out: Instruction[][] = [];
  for (const line of text.split('\n')) {
    const m = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (m === null || line.trim().startsWith('#')) continue;
    if (m[1] === 'FROM') out.push([]);
    out[out.length - 1]!.push({ op: m[1]!, args: m[2]!.trim() });
  }
  return out;
}

const work = mkdtempSync(path.join(tmpdir(), 'dockerfile-'));
const build = path.join(work, 'build');
const image = path.join(work, 'image');
let gateway: Proc | null = null;

afterAll(async () => {
  await gateway?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the Dockerfile, replayed', () => {
  const [buildStage = [], finalStage = []] = stages();

  it('has a build stage and a final stage, both on .node-version', () => {
    expect(buildStage[0]?.args).toMatch(/ AS build$/);
    expect(finalStage[0]?.op).toBe('FROM');
  });

  it('builds from the files it copies: npm install (nothing compiles), the build, the prune', () => {
    mkdirSync(build);
    for (const { op, args } of buildStage) {
      if (op === 'WORKDIR') expect(args).toBe('/app');
      else if (op === 'COPY') {
        const parts = args.split(/\s+/);
        const dest = path.join(build, parts.pop()!);
        for (const src of parts) cpSync(path.join(REPO, src), parts.length > 1 || dest.endsWith('/') ? path.join(dest, path.basename(src)) : dest, { recursive: true });
      } else if (op === 'RUN') {
        // The slim image has no compiler: hide this machine's, so a step that needs one fails here too.
        execFileSync('bash', ['-c', args], { cwd: build, stdio: 'pipe', env: { ...process.env, CC: '/bin/false', CXX: '/bin/false', npm_config_nodedir: '' }, timeout: 240_000 });
      } else if (op !== 'FROM') throw new Error(`the replay does not know ${op}: teach it`);
    }
    expect(readFileSync(path.join(build, 'dist', 'main.js'), 'utf8')).toContain('import');
    // Pruned: no devDependency left in what the image copies.
    expect(() => readFileSync(path.join(build, 'node_modules', 'vitest', 'package.json'))).toThrow();
  }, 300_000);

  it('the final stage serves a SOAP insert from what it copies, started by its CMD', async () => {
    mkdirSync(image);
    let cmd: string[] = [];
    const env: Record<string, string> = {};
    for (const { op, args } of finalStage) {
      if (op === 'COPY') {
        const m = /^--from=build \/app\/(\S+) \.\/(\S*)$/.exec(args);
        expect(m, `COPY ${args}`).not.toBeNull();
        cpSync(path.join(build, m![1]!), path.join(image, m![2]! === '' ? path.basename(m![1]!) : m![2]!), { recursive: true });
      } else if (op === 'CMD') cmd = JSON.parse(args) as string[];
      else if (op === 'ENV') {
        const [k, v] = args.split('=');
        env[k!] = v!;
      } else if (op === 'RUN') expect(args).toBe('mkdir -p /app/data && chown node:node /app/data');
      else if (!['FROM', 'WORKDIR', 'USER', 'EXPOSE'].includes(op)) throw new Error(`the replay does not know ${op}: teach it`);
    }
    expect(cmd[0]).toBe('node');
    gateway = await startNode('gateway', cmd.slice(1), image, { ...env, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: 'dockerfile-replay' });
    const admin = await fetch(`${gateway.adminUrl}/admin/providers`, {
      method: 'POST',
      headers: { Authorization: 'Bearer dockerfile-replay', 'Content-Type': 'application/json' },
      body: JSON.stringify({ systemUser: 'acme', password: 'secret-1' }),
    });
    expect(admin.status).toBe(201);
    const res = await fetch(gateway.serviceUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/LoginYInsertarEvento"' },
      body: soap11Envelope('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: 'image' }) })),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*<\/LoginYInsertarEventoResult>/);
  }, 120_000);
});
