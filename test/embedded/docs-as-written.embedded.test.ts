/**
 * The newcomer's pages run as written (README.md, docs/getting-started.md, the on-boarding of
 * docs/security.md): every `sh` block, literally, with bash -e, from the project folder, twice in
 * a row on one data directory that starts empty, against `npm start` as the pages start it. The
 * commands follow PORT, ADMIN_PORT and DATA_DIR, so this runs on free ports and a temporary
 * directory. Not run here, because CI runs each itself (.ci/run): `npm install`, `npm test` (this
 * test is part of it), `npm run typecheck`, `npm run lint`. A line `npm start` is what the pages
 * mean by "running in another terminal": started here beside the blocks, and stopped between the
 * two rounds. A command that fails, an answer that says it did not work (an API error, a refused
 * call where none is expected), or a step whose outcome is not the page's, fails the test.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { freePort } from '../helpers/spawned.js';

const CI_RUNS_IT = /^(npm install|npm test|npm run typecheck|npm run lint)(\s+#.*)?$/;
const SERVER = /^npm start(\s+#.*)?$/;
const BLOCK_MS = 180_000;

/** The `sh` blocks of a page, or of the section under `heading` (up to the next heading of its level or above). */
function shBlocks(file: string, heading?: string): string[] {
  let text = fs.readFileSync(path.join(REPO, file), 'utf8');
  if (heading !== undefined) {
    const start = text.indexOf(`\n${heading}\n`);
    if (start < 0) throw new Error(`${file} has no section "${heading}"`);
    const level = /^#+/.exec(heading)![0];
    const rest = text.slice(start + heading.length + 2);
    const next = new RegExp(`\\n#{1,${level.length}} `).exec(rest);
    text = next === null ? rest : rest.slice(0, next.index);
  }
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

interface Ran {
  code: number;
  out: string;
  err: string;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-as-written-'));
let env: Record<string, string> = {};
let server: { proc: ChildProcess; output: string[] } | null = null;
const servers: string[][] = [];
/** The build's outputs as each npm start left them: their modification times. */
const BUILT = ['dist/main.js', 'dist/gateway/app.js', 'dist/console/index.html'];
const builds: number[][] = [];

async function startServer(): Promise<void> {
  if (server !== null) return;
  const proc = spawn('npm', ['start'], { cwd: REPO, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  server = { proc, output };
  servers.push(output);
  const take = (chunk: Buffer): void => void output.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
  proc.stdout.on('data', take);
  proc.stderr.on('data', take);
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.some((l) => l.includes("operators' console"))) {
        clearInterval(timer);
        builds.push(BUILT.map((f) => fs.statSync(path.join(REPO, f)).mtimeMs));
        resolve();
      } else if (proc.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`npm start exited ${proc.exitCode}:\n${output.join('\n')}`));
      }
    }, 100);
  });
}

async function stopServer(): Promise<void> {
  if (server === null) return;
  const { proc } = server;
  server = null;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  // npm, the shell and node are one process group (detached): the gateway gets the SIGTERM too.
  if (proc.exitCode === null && proc.pid !== undefined) process.kill(-proc.pid, 'SIGTERM');
  await exited;
}

/** One block as the page has it, but the lines CI runs itself and `npm start` (started beside it). */
async function runBlock(block: string): Promise<Ran> {
  const lines = block.split('\n').map((line) => {
    if (CI_RUNS_IT.test(line.trim())) return `: not here, CI runs it: ${line}`;
    if (SERVER.test(line.trim())) return ': npm start runs beside this script';
    return line;
  });
  if (block.split('\n').some((l) => SERVER.test(l.trim()))) await startServer();
  return new Promise((resolve) => {
    execFile('bash', ['-e', '-o', 'pipefail', '-c', lines.join('\n')], { cwd: REPO, env, timeout: BLOCK_MS, maxBuffer: 16 * 1024 * 1024 }, (err, out, errOut) =>
      resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? -1), out, err: errOut }),
    );
  });
}

/** What no block may print: an admin API error, a provider call refused where none is meant, a CLI error. */
function expectNothingRefused(ran: Ran, what: string): void {
  const all = `${ran.out}\n${ran.err}`;
  expect(ran.code, `${what} exited ${ran.code}:\n${all}`).toBe(0);
  expect(ran.out, what).not.toMatch(/"error":/);
  expect(ran.out, what).not.toMatch(/>false<\/boolean>|>-[1-6]<\/(int|LoginYInsertarEventoResult)>/);
  expect(ran.err, what).not.toMatch(/^Error/m);
}

beforeAll(async () => {
  const [port, adminPort] = [await freePort(), await freePort()];
  env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    DATA_DIR: dataDir,
    GATEWAY_THREADS: '1',
  };
});

afterAll(async () => {
  await stopServer();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(path.join(REPO, 'ana.token'), { force: true });
});

describe.each([1, 2])('round %i', (round) => {
  it('README.md: npm start serves, --config prints the settings in use', { timeout: 300_000 }, async () => {
    const blocks = shBlocks('README.md');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(blocks[0]).toMatch(/^npm install\n/m);
    expect(blocks[0]).toMatch(/^npm start /m);
    expect(blocks[0]).toMatch(/^npm test /m);
    for (const [i, block] of blocks.entries()) {
      const ran = await runBlock(block);
      expectNothingRefused(ran, `README.md block ${i + 1}`);
      if (block.includes('npm start -- --config')) {
        expect(ran.out).toContain(`PORT=${env.PORT}`);
        expect(ran.out).toContain(`DATA_DIR=${dataDir}`);
      }
    }
    const console = server?.output.find((l) => l.includes("operators' console"));
    expect(console).toContain(`http://127.0.0.1:${env.ADMIN_PORT}/`);
    expect(console).toContain(path.join(dataDir, 'admin-token'));
  });

  it('docs/getting-started.md: the start, the walkthrough, an operator\'s own token', { timeout: 300_000 }, async () => {
    const [start, walkthrough, token, ...rest] = shBlocks('docs/getting-started.md');
    expect(rest).toEqual([]);
    expectNothingRefused(await runBlock(start!), 'getting-started start');

    const ran = await runBlock(walkthrough!);
    // Step 7 is the refusal the page means to show; everything before it must have worked.
    const [before, refusal = ''] = ran.out.split(/(?=<\?xml[^>]*>\s*<int[^>]*>-3<\/int>)/);
    expectNothingRefused({ ...ran, out: before! }, 'the walkthrough up to step 7');
    // 1. the provider: created the first time, left as it is the second.
    expect(before).toContain(`"outcome":"${round === 1 ? 'created' : 'unchanged'}"`);
    // 2. and 3. an id each.
    expect(before).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*<\/LoginYInsertarEventoResult>/);
    expect(before).toMatch(/<int xmlns="http:\/\/tempuri.org\/">[1-9]\d*<\/int>/);
    // 4. the command this round queued, fetched, reported and finished.
    const queued = Number(/"numero":(\d+)/.exec(before!)?.[1]);
    expect(queued).toBe(round);
    expect(before).toContain(`<NUMERO>${queued}</NUMERO>`);
    expect(before!.match(/>true<\/boolean>/g)).toHaveLength(2);
    // 5. both vehicles; 6. the events as a table.
    expect(before).toMatch(/<Dominio>AB123CD<\/Dominio>[\s\S]*<Dominio>ZZ999ZZ<\/Dominio>/);
    expect(before).toMatch(/^id\s+receivedAt\s+systemUser\s+dominio/m);
    // 7. the refused event and its reason.
    expect(refusal).toMatch(/LoginYInsertarEvento\s+-3\s+from /);
    expect(refusal).toContain('FechaHoraEvento "yesterday" is not a dateTime');

    const own = await runBlock(token!);
    expectNothingRefused(own, "getting-started's own token");
    expect(fs.readFileSync(path.join(REPO, 'ana.token'), 'utf8')).toMatch(/^gwo_[A-Za-z0-9_-]{43}\n$/);
    expect(own.out).toMatch(/^identity\s+ana$/m);
  });

  it('docs/security.md: on-boarding an operator', { timeout: 300_000 }, async () => {
    const blocks = shBlocks('docs/security.md', '### On-boarding an operator');
    expect(blocks).toHaveLength(1);
    const ran = await runBlock(blocks[0]!);
    expectNothingRefused(ran, 'on-boarding');
    expect(fs.readFileSync(path.join(REPO, 'ana.token'), 'utf8').split('\n')).toHaveLength(2);
    expect(ran.out).toMatch(/^role\s+operator$/m);
    expect(ran.out).toMatch(/^expiresAt\s+\d{4}-/m);
    // The next round starts npm start again, on the same data directory.
    await stopServer();
  });
});

describe('npm start the second time', () => {
  it('rebuilt nothing: its build said so, and no output file changed', () => {
    expect(servers).toHaveLength(2);
    expect(servers[1]!.join('\n')).toContain('console in dist/console is up to date with its sources');
    expect(builds).toHaveLength(2);
    expect(builds[1]).toEqual(builds[0]);
  });
});
