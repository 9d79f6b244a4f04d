/**
 * The fault proxy the faults layer puts in front of each engine (test/helpers/fault-proxy.ts),
 * against a throwaway echo server: what a client sees in each mode, and that black-holed and
 * half-open connections stay dead after the heal while new ones work.
 */
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FaultProxy } from '../../helpers/fault-proxy.js';

let echo: net.Server;
let serverSide: net.Socket[];
let proxy: FaultProxy;

beforeEach(async () => {
  serverSide = [];
  echo = net.createServer((s) => {
    serverSide.push(s);
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  proxy = await FaultProxy.start({ host: '127.0.0.1', port: (echo.address() as net.AddressInfo).port });
});
afterEach(async () => {
  await proxy.close();
  for (const s of serverSide) s.destroy();
  await new Promise<void>((r) => echo.close(() => r()));
});

/** A connected client that records what it receives and how it ended. */
async function client(): Promise<{ socket: net.Socket; received: () => string; ended: () => string | null; send: (s: string) => void }> {
  const socket = net.connect(proxy.port, '127.0.0.1');
  let data = '';
  let end: string | null = null;
  socket.on('data', (d: Buffer) => (data += d.toString()));
  socket.on('error', (e: NodeJS.ErrnoException) => (end = e.code ?? 'error'));
  socket.on('close', () => (end ??= 'close'));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => data, ended: () => end, send: (s) => socket.write(s) };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await wait(10);
  }
}

describe('FaultProxy', () => {
  it('passes bytes both ways', async () => {
    const c = await client();
    c.send('hello');
    await until('the echo', () => c.received() === 'hello');
    c.socket.destroy();
  });

  it('black hole: connections stay open and silent, also new ones; after the heal old ones stay dead, new ones work', async () => {
    const old = await client();
    old.send('a');
    await until('the echo', () => old.received() === 'a');
    proxy.blackHole();
    old.send('b');
    const during = await client();
    during.send('c');
    await wait(200);
    expect(old.received()).toBe('a');
    expect(during.received()).toBe('');
    expect(old.ended()).toBeNull();
    expect(during.ended()).toBeNull();
    proxy.heal();
    old.send('d');
    during.send('e');
    const fresh = await client();
    fresh.send('f');
    await until('the fresh echo', () => fresh.received() === 'f');
    await wait(100);
    expect(old.received()).toBe('a');
    expect(during.received()).toBe('');
    expect(old.ended()).toBeNull();
    for (const c of [old, during, fresh]) c.socket.destroy();
  });

  it('half-open: the engine sees its side closed, the client nothing at all', async () => {
    const c = await client();
    c.send('a');
    await until('the echo', () => c.received() === 'a');
    const engineSide = serverSide[0]!;
    proxy.halfOpen();
    await until('the engine side closed', () => engineSide.destroyed || engineSide.readableEnded);
    c.send('b');
    await wait(200);
    expect(c.received()).toBe('a');
    expect(c.ended()).toBeNull();
    proxy.heal();
    const fresh = await client();
    fresh.send('z');
    await until('the fresh echo', () => fresh.received() === 'z');
    c.socket.destroy();
    fresh.socket.destroy();
  });

  it('reset: open connections and new ones are reset until the heal', async () => {
    const c = await client();
    proxy.reset();
    await until('the reset', () => c.ended() === 'ECONNRESET');
    const during = await client().catch((e: unknown) => (e as NodeJS.ErrnoException).code ?? 'error');
    if (typeof during !== 'string') {
      await until('the new connection reset', () => during.ended() !== null);
      expect(during.ended()).toBe('ECONNRESET');
    } else expect(during).toBe('ECONNRESET');
    proxy.heal();
    const fresh = await client();
    fresh.send('ok');
    await until('the fresh echo', () => fresh.received() === 'ok');
    fresh.socket.destroy();
  });

  it('slow: every chunk held the given time each way, in order', async () => {
    const c = await client();
    proxy.slow(150);
    const t0 = Date.now();
    c.send('1');
    await wait(20);
    c.send('2');
    await until('both echoes', () => c.received() === '12');
    // Up and down: each chunk waited twice.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    proxy.heal();
    const t1 = Date.now();
    c.send('3');
    await until('the third echo', () => c.received() === '123');
    expect(Date.now() - t1).toBeLessThan(150);
    c.socket.destroy();
  });

  it("never reorders a connection's bytes: chunks sent after a heal wait behind those still held", async () => {
    const c = await client();
    proxy.slow(200);
    for (const n of ['1', '2', '3']) {
      c.send(n);
      await wait(5);
    }
    // Healed while 1, 2 and 3 are held on their way up (and their echoes on the way down).
    await wait(50);
    proxy.heal();
    c.send('4');
    c.send('5');
    await until('all five echoes', () => c.received().length === 5);
    expect(c.received()).toBe('12345');
    c.socket.destroy();
  });
});
