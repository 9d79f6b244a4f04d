import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const dir = mkdtempSync(path.join(tmpdir(), 'heap-'));
const server = await startServer({ SQLITE_SYNCHRONOUS: 'FULL' }, { nodeArgs: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] });
await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
async function snap(label: string): Promise<Map<string, number>> {
  const before = new Set(readdirSync(dir));
  server.child.kill('SIGUSR2');
  let file = '';
  for (let i = 0; i < 300 && file === ''; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const fresh = readdirSync(dir).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (fresh.length > 0) {
      const f = path.join(dir, fresh[0]!);
      const s1 = statSync(f).size;
      await new Promise((r) => setTimeout(r, 1000));
      if (statSync(f).size === s1 && s1 > 0) file = f;
    }
  }
  const snapJson = JSON.parse(readFileSync(file, 'utf8')) as { snapshot: { meta: { node_fields: string[]; node_types: string[][] } }; nodes: number[]; strings: string[] };
  const f = snapJson.snapshot.meta.node_fields;
  const types = snapJson.snapshot.meta.node_types[0]!;
  const step = f.length;
  const iType = f.indexOf('type');
  const iName = f.indexOf('name');
  const iSize = f.indexOf('self_size');
  const by = new Map<string, number>();
  for (let i = 0; i < snapJson.nodes.length; i += step) {
    const type = types[snapJson.nodes[i + iType]!]!;
    const name = type === 'object' || type === 'closure' ? snapJson.strings[snapJson.nodes[i + iName]!]! : `(${type})`;
    by.set(name, (by.get(name) ?? 0) + snapJson.nodes[i + iSize]!);
  }
  const total = [...by.values()].reduce((a, b) => a + b, 0);
  console.log(`${label}: heap ${(total / 2 ** 20).toFixed(1)} MB`);
  return by;
}
const a = await snap('after start');
let seed = 1;
for (let w = 0; w < 6; w++) await runWrk({ url: server.serviceUrl, script: 'soap11-insert.lua', seconds: 5, connections: 50, seed: seed++ * 100_000_000, args: [] });
const b = await snap('after 30 s of inserts');
const diff = [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).sort((x, y) => y[1] - x[1]).slice(0, 25);
for (const [k, v] of diff) console.log(`  +${(v / 1024).toFixed(0)} KB  ${k}`);
await server.stop();
