/**
 * What a front-end thread's call into the main thread costs (gateway/threads/rpc.ts), per call,
 * split by thread: the main thread's busy time is what bounds GATEWAY_THREADS (every thread's
 * shared-state calls and event appends run there), the front end's is added to each request.
 *
 *   npx tsx bench/thread-rpc.ts [--seconds 3] [--concurrency 1,50]
 *
 * One front-end thread keeps `concurrency` calls outstanding (as many requests in flight); each
 * reply sends the next call. Scenarios: a session touch (a small call), an event append to a log
 * that answers at once (the cost of cloning an event across), and an append to the real embedded
 * event log (ids, dedupe, group commit on the writer thread; SQLITE_SYNCHRONOUS=NORMAL), each also
 * called directly on one thread for the baseline. Busy time is event-loop utilisation × wall time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MessageChannel, Worker, isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { openEmbeddedBackends } from '../shared/backends/embedded/index.js';
import { MemorySessionStore } from '../shared/backends/embedded/sessions.js';
import type { AppendOutcome, EventLog, EventRecord } from '../shared/backends/types.js';
import { BOOTSTRAP } from '../gateway/threads/protocol.js';
import { RpcClient, serveCalls } from '../gateway/threads/rpc.js';
import { remoteState, stateHandlers, type SharedState } from '../gateway/threads/shared-state.js';
import { sampleEvent } from '../test/helpers/event-records.js';

type Scenario = 'touch' | 'append-echo' | 'append-sqlite';
const SCENARIOS: readonly Scenario[] = ['touch', 'append-echo', 'append-sqlite'];

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

let serial = 0;
/** A LoginYInsertarEvento2 event as the operation layer builds it. */
function makeEvent(): EventRecord {
  serial++;
  const now = Date.now();
  return sampleEvent(serial, {
    systemUser: 'bench',
    eventTime: { epochMs: now - 1000, subMsTicks: serial % 10_000 },
    receptionTime: { epochMs: now, subMsTicks: 0 },
    receivedAt: now,
    crudo: null,
    sensors: [{ clave: 'ign', valor: '1' }],
    dedupeKey: `${process.pid}-${serial}-${Math.random()}`,
  });
}

/** Issues calls with `concurrency` outstanding until `seconds` pass; calls per second and busy µs per call. */
async function closedLoop(call: () => Promise<unknown>, concurrency: number, seconds: number): Promise<{ calls: number; busyUsPerCall: number; perSecond: number }> {
  const deadline = performance.now() + seconds * 1000;
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  let calls = 0;
  const lane = async (): Promise<void> => {
    while (performance.now() < deadline) {
      await call();
      calls++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const wall = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  return { calls, busyUsPerCall: (elu.active * 1000) / calls, perSecond: (calls / wall) * 1000 };
}

function callOf(state: Pick<SharedState, 'sessions' | 'eventLog'>, scenario: Scenario): () => Promise<unknown> {
  if (scenario === 'touch') return () => state.sessions.touch('s'.repeat(24), Date.now(), 60_000);
  return () => state.eventLog.append([makeEvent()]);
}

async function frontEnd(): Promise<void> {
  const { port, scenario, concurrency, seconds } = workerData as { port: MessagePort; scenario: Scenario; concurrency: number; seconds: number };
  const rpc = new RpcClient(port);
  const result = await closedLoop(callOf(remoteState(rpc), scenario), concurrency, seconds);
  parentPort!.postMessage(result);
  rpc.close();
}

const echoLog: EventLog = {
  append: async (events) => events.map((): AppendOutcome => ({ ok: true, id: BigInt(++serial), duplicate: false })),
  close: async () => {},
};

async function withState<T>(scenario: Scenario, use: (state: SharedState) => Promise<T>): Promise<T> {
  const sessions = new MemorySessionStore();
  await sessions.create('s'.repeat(24), 'bench', Date.now(), 60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-rpc-bench-'));
  const embedded = scenario === 'append-sqlite' ? await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000 }) : null;
  try {
    // Only what the scenarios call.
    const state: Partial<SharedState> = { sessions, eventLog: embedded?.eventLog ?? echoLog };
    return await use(state as SharedState);
  } finally {
    await embedded?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const seconds = Number(arg('seconds', '3'));
  const concurrencies = arg('concurrency', '1,50').split(',').map(Number);
  const rows: string[] = [];
  const pad = (s: string, n: number): string => s.padStart(n);
  rows.push(`${'scenario'.padEnd(14)} ${pad('in flight', 9)} ${pad('direct calls/s', 14)} ${pad('direct µs', 10)} ${pad('rpc calls/s', 12)} ${pad('main µs/call', 13)} ${pad('front µs/call', 14)}`);
  for (const scenario of SCENARIOS) {
    for (const concurrency of concurrencies) {
      const direct = await withState(scenario, (state) => closedLoop(callOf(state, scenario), concurrency, seconds));
      const remote = await withState(scenario, async (state) => {
        const channel = new MessageChannel();
        const elu0 = performance.eventLoopUtilization();
        serveCalls(channel.port1, stateHandlers(state));
        // The gateway's own bootstrap: registers tsx in the thread, then imports this file.
        const workerData = { entry: import.meta.url, tsx: import.meta.resolve('tsx/esm/api'), port: channel.port2, scenario, concurrency, seconds };
        const worker = new Worker(BOOTSTRAP, { workerData, transferList: [channel.port2] });
        const front = await new Promise<{ calls: number; busyUsPerCall: number; perSecond: number }>((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
        const mainBusyMs = performance.eventLoopUtilization(elu0).active;
        await worker.terminate();
        channel.port1.close();
        return { ...front, mainUsPerCall: (mainBusyMs * 1000) / front.calls };
      });
      rows.push(
        `${scenario.padEnd(14)} ${pad(String(concurrency), 9)} ${pad(Math.round(direct.perSecond).toLocaleString('en-US'), 14)} ${pad(direct.busyUsPerCall.toFixed(2), 10)} ` +
          `${pad(Math.round(remote.perSecond).toLocaleString('en-US'), 12)} ${pad(remote.mainUsPerCall.toFixed(2), 13)} ${pad(remote.busyUsPerCall.toFixed(2), 14)}`,
      );
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    }
  }
  process.stdout.write(`\n${os.cpus()[0]?.model ?? 'cpu'} × ${os.availableParallelism()}, Node ${process.version}, ${seconds} s per cell\n${rows.join('\n')}\n`);
}

if (isMainThread) await main();
else await frontEnd();
