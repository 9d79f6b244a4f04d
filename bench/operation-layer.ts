/**
 * The operation layer alone, before/after in one process: `OperationService.invoke` for SOAP's
 * LoginYInsertarEvento (credentials, limits, validation, dedupe key, metrics) against two builds,
 * alternating A, B, A, B…, with an event log that answers at once (no SQLite, no thread hop), so
 * what is measured is the layer's own CPU per call. Needs no network and no free core: a
 * contended machine slows both builds alike within a round, and the ratio stays readable.
 *
 * Run: npx tsx bench/operation-layer.ts <checkout A with dist/> [checkout B, default this one]
 *      (env ROUNDS=7, CALLS=200000, CONCURRENCY=50: calls in flight per batch, as a server has)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EventLog } from '../shared/backends/types.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const [rootA, rootB = ROOT] = process.argv.slice(2).map((p) => path.resolve(p));
if (rootA === undefined) throw new Error('usage: bench/operation-layer.ts <checkout A with dist/> [checkout B]');
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CALLS = Number(process.env.CALLS ?? 200_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);

interface Invoker {
  invoke(name: string, args: Record<string, unknown>, now: number): Promise<unknown>;
  close(): Promise<void>;
}

/** One build's operation layer over embedded stores, with an event log that answers at once. */
async function load(root: string): Promise<Invoker> {
  // Both builds are assumed to have this checkout's module shapes (the layer's API did not change).
  const dist = <T>(p: string): Promise<T> => import(pathToFileURL(path.join(root, 'dist', p)).href) as Promise<T>;
  const [{ OperationService }, { openEmbeddedBackends }, { CachedProviderStore }, { loadConfig }, { hashPassword }, { findOperation }, { parseXmlDateTime }, { Metrics }] =
    await Promise.all([
      dist<typeof import('../gateway/service/service.js')>('gateway/service/service.js'),
      dist<typeof import('../shared/backends/embedded/index.js')>('shared/backends/embedded/index.js'),
      dist<typeof import('../gateway/service/provider-cache.js')>('gateway/service/provider-cache.js'),
      dist<typeof import('../shared/config/index.js')>('shared/config/index.js'),
      dist<typeof import('../shared/domain/passwords.js')>('shared/domain/passwords.js'),
      dist<typeof import('../shared/catalogue/index.js')>('shared/catalogue/index.js'),
      dist<typeof import('../shared/dotnet/xml-convert.js')>('shared/dotnet/xml-convert.js'),
      dist<typeof import('../shared/runtime/metrics.js')>('shared/runtime/metrics.js'),
    ]);
  const dir = mkdtempSync(path.join(tmpdir(), 'op-layer-'));
  const backends = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000 });
  await backends.providers.create({
    systemUser: 'bench', passwordHash: await hashPassword('bench-secret'), enabled: true, timeZone: null,
    requireRegisteredVehicles: false, createdAt: 0, updatedAt: 0,
  });
  let nextId = 0n;
  const eventLog: EventLog = {
    append: (events) => Promise.resolve(events.map(() => ({ ok: true, id: ++nextId, duplicate: false }))),
    close: () => Promise.resolve(),
  };
  const config = loadConfig({});
  const providers = new CachedProviderStore(backends.providers, 60_000);
  const service = new OperationService({ ...backends, providers, eventLog }, config, { metrics: new Metrics() });
  const today = () => ({ year: 2026, month: 11, day: 25 });
  let seq = 0;
  return {
    invoke: (name, args, now) => {
      const op = findOperation(name);
      if (op === undefined) throw new Error(`no operation ${name}`);
      const text = `2026-11-25T10:${String(seq % 60).padStart(2, '0')}:${String(++seq % 60).padStart(2, '0')}`;
      const dt = { text, parsed: parseXmlDateTime(text, today, { spaceForT: true }) };
      const call = { ...args, FechaHoraEvento: dt, FechaHoraRecepcion: dt };
      const ctx = { operation: name, now, deadline: Infinity, sessionId: null, extras: new Map(), clientAddress: () => '127.0.0.1', newSessionId: null, provider: null };
      return service.invoke(op, call, ctx);
    },
    close: async () => {
      await backends.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const ARGS = { SystemUser: 'bench', Password: 'bench-secret', Dominio: 'AB123CD', NroSerie: '42', Codigo: '1', Latitud: -34.6, Longitud: -58.4, Altitud: 25, Velocidad: 60 };

/** CPU µs per call over CALLS calls, CONCURRENCY in flight at a time. */
async function measure(layer: Invoker): Promise<number> {
  const start = process.cpuUsage();
  for (let done = 0; done < CALLS; done += CONCURRENCY) {
    const now = Date.now();
    const batch: Promise<unknown>[] = [];
    for (let i = 0; i < CONCURRENCY; i++) batch.push(layer.invoke('LoginYInsertarEvento', { ...ARGS, Latitud: -34.6 - (done + i) * 1e-6 }, now));
    const results = await Promise.all(batch);
    if (typeof results[0] !== 'number' || results[0] <= 0) throw new Error(`unexpected answer ${String(results[0])}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

const a = await load(rootA);
const b = await load(rootB);
// Warm both (JIT, the credentials' first scrypt verification).
await measure(a);
await measure(b);
const ratios: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const usA = await measure(a);
  const usB = await measure(b);
  ratios.push(usB / usA);
  console.log(`round ${round}: A ${usA.toFixed(2)} µs/call  B ${usB.toFixed(2)} µs/call  B/A ${(usB / usA).toFixed(3)}`);
}
ratios.sort((x, y) => x - y);
console.log(`median B/A CPU per call: ${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)} (A ${rootA}, B ${rootB}; ${CALLS} calls × ${ROUNDS} rounds, ${CONCURRENCY} in flight)`);
await a.close();
await b.close();
