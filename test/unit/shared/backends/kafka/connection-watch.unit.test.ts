/**
 * ConnectionWatch against brokers that stall (throwaway servers that accept connections, read
 * requests and never answer): a request that times out takes its silent connection with it, the
 * next request opens a fresh one, and a stalled broker is asked for metadata after the others.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaAdmin } from '../../../../../shared/backends/kafka/client.js';
import { isKafkaTimeout } from '../../../../../shared/backends/kafka/errors.js';

interface Stalled {
  address: string;
  /** Connections accepted so far, and how many of them the client closed. */
  accepted: number;
  closed: number;
  close(): Promise<void>;
}

async function stalledBroker(): Promise<Stalled> {
  const sockets = new Set<net.Socket>();
  const state = { accepted: 0, closed: 0 };
  const server = net.createServer((s) => {
    state.accepted++;
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => state.closed++);
    s.resume(); // reads the requests, answers none
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    get accepted() {
      return state.accepted;
    },
    get closed() {
      return state.closed;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

describe('ConnectionWatch', () => {
  it('a request that gets no answer in time closes its connection; the next request opens a fresh one', async () => {
    const broker = await stalledBroker();
    opened.push(broker);
    const admin = await KafkaAdmin.open({ brokers: [broker.address], clientId: 'watch-test', requestTimeoutMs: 300 });
    opened.push(admin);
    await expect(admin.listTopics()).rejects.toSatisfy(isKafkaTimeout);
    await until(() => broker.closed === 1);
    expect(broker.closed).toBe(1);
    await expect(admin.listTopics()).rejects.toSatisfy(isKafkaTimeout);
    expect(broker.accepted).toBe(2);
  });

  it('asks a broker that stalled for metadata only after the others', async () => {
    const first = await stalledBroker();
    const second = await stalledBroker();
    opened.push(first, second);
    const admin = await KafkaAdmin.open({ brokers: [first.address, second.address], clientId: 'watch-test', requestTimeoutMs: 300 });
    opened.push(admin);
    await expect(admin.listTopics()).rejects.toThrow();
    expect([first.accepted, second.accepted]).toEqual([1, 0]);
    // The library would go to the first bootstrap broker again (it accepts connections); it is asked last now.
    await expect(admin.listTopics()).rejects.toThrow();
    expect([first.accepted, second.accepted]).toEqual([1, 1]);
    // Both suspected: the configured order again.
    await expect(admin.listTopics()).rejects.toThrow();
    expect([first.accepted, second.accepted]).toEqual([2, 1]);
  });

  it('closeWithin waits for a close that never ends only its grace, then destroys the connections still open', async () => {
    const broker = await stalledBroker();
    opened.push(broker);
    const admin = await KafkaAdmin.open({ brokers: [broker.address], clientId: 'watch-test', requestTimeoutMs: 5000 });
    opened.push(admin);
    const pending = admin.listTopics().catch((e: unknown) => e);
    await until(() => broker.accepted === 1);
    const started = performance.now();
    await admin.watch.closeWithin(new Promise(() => undefined), 150);
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(waited).toBeLessThan(1000);
    await until(() => broker.closed === 1);
    expect(broker.closed).toBe(1);
    await pending;
  });

  it('closeWithin returns as soon as the close does, and a close that fails does not reject', async () => {
    const admin = await KafkaAdmin.open({ brokers: ['127.0.0.1:1'], clientId: 'watch-test', requestTimeoutMs: 1000 });
    opened.push(admin);
    const watchOnly = admin.watch;
    const started = performance.now();
    await watchOnly.closeWithin(Promise.resolve(), 5000);
    await watchOnly.closeWithin(Promise.reject(new Error('close failed')), 5000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
