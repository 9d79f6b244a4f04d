/**
 * Memory of failed-login tracking under hostile traffic (docs/protocol.md §Lockout): the gateway's
 * RSS before and after N failed logins, (a) each for a made-up SystemUser, (b) for one real
 * SystemUser from a different client address each time. Both must stay flat: unknown names cost a
 * counter, and a real one stops being recorded once it is locked everywhere.
 *
 *   npx tsx bench/lockout-memory.ts            # 1,000,000 requests per scenario
 *   LOGINS=200000 npx tsx bench/lockout-memory.ts
 */
import { rssKb } from './lib/proc.js';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const LOGINS = Number(process.env.LOGINS ?? 1_000_000);
const CONNECTIONS = 50;

async function scenario(mode: 'unknown' | 'addresses'): Promise<void> {
  const server = await startServer();
  try {
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    const pid = server.child.pid!;
    // A short warm-up so the baseline includes a JIT-compiled, connected server.
    await runWrk({ url: `${server.serviceUrl}/Login`, script: 'failed-logins.lua', seconds: 2, connections: CONNECTIONS, seed: 9e8, args: [mode] });
    const before = rssKb(pid);
    let sent = 0;
    let seed = 0;
    let peak = before;
    const started = Date.now();
    while (sent < LOGINS) {
      const r = await runWrk({ url: `${server.serviceUrl}/Login`, script: 'failed-logins.lua', seconds: 10, connections: CONNECTIONS, seed, args: [mode] });
      if (r.code !== 0 || r.requests === null) throw new Error(`wrk failed: ${r.stderr}`);
      sent += r.requests;
      seed += 100_000_000;
      peak = Math.max(peak, rssKb(pid));
    }
    const seconds = (Date.now() - started) / 1000;
    const after = rssKb(pid);
    console.log(
      `${mode.padEnd(9)} ${sent.toLocaleString('en')} failed logins in ${seconds.toFixed(0)} s (${Math.round(sent / seconds).toLocaleString('en')}/s): ` +
        `RSS ${Math.round(before / 1024)} MB before, ${Math.round(peak / 1024)} MB peak, ${Math.round(after / 1024)} MB after ` +
        `(+${Math.round((after - before) / 1024)} MB)`,
    );
  } finally {
    await server.stop();
  }
}

console.log(`lockout memory, ${new Date().toISOString()}, node ${process.version}`);
await scenario('unknown');
await scenario('addresses');
