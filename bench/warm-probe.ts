import { readdirSync, readFileSync } from 'node:fs';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';
function perThread(pid: number): Map<string, { name: string; minflt: number }> {
  const m = new Map<string, { name: string; minflt: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      m.set(tid, { name, minflt: Number(f[7]) });
    } catch {
      // gone
    }
  }
  return m;
}
const server = await startServer({ SQLITE_SYNCHRONOUS: 'FULL' });
await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
const pid = server.child.pid!;
const heap = async (): Promise<string> => {
  const res = await fetch(`${server.adminUrl}/metrics`, { headers: { Authorization: 'Bearer bench' } });
  const text = await res.text();
  const spaces = [...text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="([^"]+)"\} (\d+)/gm)].map((m) => `${m[1]} ${Math.round(Number(m[2]) / 2 ** 20)}`);
  return spaces.join(' ');
};
console.log(`idle: RSS ${Math.round(server.reading().rssKb / 1024)} MB; heap MB: ${await heap()}`);
let seed = 1;
for (let w = 0; w < Number(process.env.WINDOWS ?? 6); w++) {
  const a = perThread(pid);
  const r = await runWrk({ url: server.serviceUrl, script: 'soap11-insert.lua', seconds: 5, connections: 50, seed: seed++ * 100_000_000, args: [] });
  const b = perThread(pid);
  const byName = new Map<string, number>();
  for (const [tid, t] of b) {
    const key = tid === String(pid) ? 'main' : t.name;
    byName.set(key, (byName.get(key) ?? 0) + t.minflt - (a.get(tid)?.minflt ?? 0));
  }
  const rows = [...byName].filter(([, v]) => v > 0).map(([k, v]) => `${k} ${(v / r.requests!).toFixed(3)}`);
  console.log(`window ${w + 1}: ${Math.round(r.reqPerSec!)} req/s, RSS ${Math.round(server.reading().rssKb / 1024)} MB, faults/req ${rows.join(', ')}; heap MB: ${await heap()}`);
}
await server.stop();
