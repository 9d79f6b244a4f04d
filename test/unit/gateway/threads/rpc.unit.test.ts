/** The calls between front-end threads and the main thread (gateway/threads/rpc.ts, shared-state.ts), over a real MessageChannel. */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../../../shared/backends/embedded/sessions.js';
import { BackendUnavailableError, type AppendOutcome, type EventLog } from '../../../../shared/backends/types.js';
import { TokenBucketLimiter } from '../../../../gateway/service/rate-limit.js';
import { RpcClient, serveCalls, type Call } from '../../../../gateway/threads/rpc.js';
import { remoteState, stateHandlers, type SharedState } from '../../../../gateway/threads/shared-state.js';
import { eventRecords } from '../../../helpers/event-records.js';

const open: MessagePort[] = [];
afterEach(() => {
  for (const port of open.splice(0)) port.close();
});

function connect(handlers: ((args: unknown[]) => Promise<unknown>)[]): { client: RpcClient; server: MessagePort } {
  const { port1, port2 } = new MessageChannel();
  open.push(port1, port2);
  serveCalls(port1, handlers);
  return { client: new RpcClient(port2), server: port1 };
}

describe('RPC between threads', () => {
  it('values survive the crossing: BigInt ids, Dates, nulls, nested arrays', async () => {
    const { client } = connect([async (args) => args]);
    const value = [{ id: 2n ** 62n + 1n, at: new Date(Date.UTC(2026, 0, 2)), none: null, list: [[1, 'a'], []] }];
    const back = (await client.call(0, value)) as typeof value;
    expect(back).toEqual(value);
    expect(typeof back[0]!.id).toBe('bigint');
    expect(back[0]!.at).toBeInstanceOf(Date);
  });

  it('"backend unavailable" stays that error (answered -5 / retry later); others keep name and message', async () => {
    const { client } = connect([
      async () => {
        throw new BackendUnavailableError('disk full');
      },
      async () => {
        throw new RangeError('bad id');
      },
    ]);
    const unavailable = await client.call(0, []).catch((e: unknown) => e);
    expect(unavailable).toBeInstanceOf(BackendUnavailableError);
    expect((unavailable as Error).message).toBe('disk full');
    const other = await client.call(1, []).catch((e: unknown) => e);
    expect(other).not.toBeInstanceOf(BackendUnavailableError);
    expect(other).toMatchObject({ name: 'RangeError', message: 'bad id' });
  });

  it('an unknown operation or a throwing handler is answered with an error; the server keeps serving', async () => {
    const { client } = connect([
      (() => {
        throw new TypeError('sync throw');
      }),
      async () => 'fine',
    ]);
    await expect(client.call(7, [])).rejects.toThrow(/Unknown backend operation 7/);
    await expect(client.call(0, [])).rejects.toThrow(/sync throw/);
    await expect(client.call(1, [])).resolves.toBe('fine');
  });

  it('calls made in one turn travel in one message, and so do their replies', async () => {
    const { port1, port2 } = new MessageChannel();
    open.push(port1, port2);
    const batches: number[] = [];
    port1.on('message', (calls: Call[]) => batches.push(calls.length));
    serveCalls(port1, [async (args) => args[0]]);
    const client = new RpcClient(port2);
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => client.call(0, [i])));
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(batches).toEqual([100]);
  });

  it('closing the client fails what still waits as "unavailable" and refuses new calls', async () => {
    const { client } = connect([() => new Promise(() => {})]);
    const waiting = client.call(0, []);
    await new Promise((r) => setImmediate(r));
    expect(client.waiting).toBe(1);
    client.close();
    await expect(waiting).rejects.toBeInstanceOf(BackendUnavailableError);
    await expect(client.call(0, [])).rejects.toBeInstanceOf(BackendUnavailableError);
  });
});

describe('the shared state over RPC', () => {
  it('the operation layer\'s stores behave as the real ones: sessions, event appends, rate buckets', async () => {
    const sessions = new MemorySessionStore();
    const appended: unknown[] = [];
    const eventLog: EventLog = {
      append: async (events) => {
        appended.push(...events);
        return events.map((): AppendOutcome => ({ ok: true, id: 9_007_199_254_740_993n, duplicate: false }));
      },
      close: async () => {},
    };
    const state: Partial<SharedState> = { sessions, eventLog, rateLimiter: new TokenBucketLimiter(3) };
    const { client } = connect(stateHandlers(state as SharedState));
    const remote = remoteState(client);

    await remote.sessions.create('a'.repeat(24), 'acme', 1000, 60_000);
    expect(await remote.sessions.touch('a'.repeat(24), 2000, 60_000)).toEqual({ id: 'a'.repeat(24), systemUser: 'acme', expiresAt: 62_000 });
    expect(await sessions.touch('a'.repeat(24), 3000, 60_000)).not.toBeNull();
    expect(await remote.sessions.destroy('a'.repeat(24), 4000)).toBe(true);
    expect(await sessions.touch('a'.repeat(24), 5000, 60_000)).toBeNull();

    const record = eventRecords({ eventTimeBase: 0, stepMs: 1000, receivedAt: 1, dedupePrefix: 'k' })();
    expect(await remote.eventLog.append([record])).toEqual([{ ok: true, id: 9_007_199_254_740_993n, duplicate: false }]);
    expect(appended).toEqual([record]);

    expect(await remote.rateLimiter.take('acme', 5, 0)).toBe(3);
    expect(await remote.rateLimiter.take('acme', 1, 0)).toBe(0);
    expect(await remote.rateLimiter.take('acme', 1, 1000)).toBe(1);
  });

  it('a method the main thread lacks is an error, not a crash', async () => {
    const { client } = connect(stateHandlers({} as SharedState));
    await expect(remoteState(client).sessions.touch('x', 0, 1)).rejects.toThrow();
  });
});
