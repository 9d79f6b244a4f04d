/**
 * CPU profile of the gateway under load: starts `dist/main.js` (embedded, FULL) with
 * `--cpu-prof`, drives one bench/wrk script at it, stops the server and prints the top frames by
 * self time and the source files by self time. The .cpuprofile stays in PROFILE_DIR for
 * speedscope / Chrome DevTools (flame graph).
 *
 * Run: npx tsx bench/profile.ts [script.lua [wrk script args]] | [file.cpuprofile]
 *        (default soap11-insert.lua; env DURATION=10,
 * CONNECTIONS=100, TOP=25, PROFILE_DIR=/tmp/gw-profile)
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = path.resolve(import.meta.dirname, '..');
const SCRIPT = process.argv[2] ?? 'soap11-insert.lua';
const DURATION = Number(process.env.DURATION ?? 10);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 100);
const TOP = Number(process.env.TOP ?? 25);
const PROFILE_DIR = process.env.PROFILE_DIR ?? '/tmp/gw-profile';

function label(frame: ProfileNode['callFrame']): string {
  const file = frame.url.replace(/^file:\/\//, '').replace(ROOT + '/', '');
  return `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
}

function summarise(profile: CpuProfile): void {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((a, n) => a + (self.get(n.id) ?? 0), 0);
  const byFrame = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0 || node.callFrame.functionName === '(idle)') continue;
    const key = label(node.callFrame);
    byFrame.set(key, (byFrame.get(key) ?? 0) + us);
    const file = node.callFrame.url ? node.callFrame.url.replace(/^file:\/\//, '').replace(ROOT + '/', '').replace(/^.*node_modules\/([^/]+(\/[^/]+)?)\/.*$/, '$1') : `(${node.callFrame.functionName})`;
    byFile.set(file, (byFile.get(file) ?? 0) + us);
  }
  const busy = total - idle;
  const pct = (us: number): string => `${((100 * us) / busy).toFixed(1)}%`.padStart(6);
  console.log(`\nbusy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s sampled (${((100 * busy) / total).toFixed(0)}%)`);
  console.log(`\ntop ${TOP} frames by self time (share of busy time):`);
  for (const [k, us] of [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${pct(us)}  ${k}`);
  // Inclusive ("total") time: every frame on a sampled stack counts the sample once.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    if (nodeById.get(id)?.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const node = nodeById.get(cur)!;
      if (!node.callFrame.url.includes('/dist/')) continue;
      const key = label(node.callFrame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  console.log(`\ntop ${TOP} of our frames by total time (self + callees):`);
  for (const [k, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${pct(us)}  ${k}`);
  console.log('\nby file / package:');
  for (const [k, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${pct(us)}  ${k}`);
}

if (SCRIPT.endsWith('.cpuprofile')) {
  // Summarise an existing profile only.
  summarise(JSON.parse(readFileSync(SCRIPT, 'utf8')) as CpuProfile);
  process.exit(0);
}
rmSync(PROFILE_DIR, { recursive: true, force: true });
mkdirSync(PROFILE_DIR, { recursive: true });
const server = await startServer({ SQLITE_SYNCHRONOUS: 'FULL' }, { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] });
try {
  await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
  const extra = process.argv.slice(3);
  const r = await runWrk({ url: server.serviceUrl, script: SCRIPT, seconds: DURATION, connections: CONNECTIONS, seed: 1, args: extra });
  console.log(r.stdout.split('\n').filter((l) => /Requests\/sec|lua_|Non-2xx|50%|99%/.test(l)).join('\n'));
} finally {
  await server.stop();
}
const file = readdirSync(PROFILE_DIR).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no .cpuprofile written to ${PROFILE_DIR}`);
summarise(JSON.parse(readFileSync(path.join(PROFILE_DIR, file), 'utf8')) as CpuProfile);
console.log(`\nprofile: ${path.join(PROFILE_DIR, file)}`);
