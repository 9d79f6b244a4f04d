import net from 'node:net';

/**
 * A TCP forwarder in front of an engine that fails the way networks do:
 * - blackHole(): every connection stays open and nothing is forwarded either way; connections
 *   made meanwhile are accepted and forwarded nowhere (a load balancer whose upstream died, a
 *   dropped NAT/conntrack entry, a frozen VM behind a proxy);
 * - halfOpen(): the engine's side of every connection is closed, the client's side kept open and
 *   silent (a peer gone without a FIN or an RST); new connections as in blackHole();
 * - reset(): every connection is reset (RST), and so is every new one until heal();
 * - slow(ms): every chunk, both ways, is held `ms` before it is passed on.
 * heal() forwards new connections again. Connections that were black-holed or half-open stay dead,
 * as they do behind a real network fault: only a client that drops them and connects again recovers.
 *
 * Like TCP, it never reorders a connection's bytes: each direction is one queue, and a chunk goes
 * out only after every chunk that came before it, also across a heal (a chunk arriving after the
 * heal waits for those still held). It once passed such a chunk on at once, ahead of the held ones:
 * a client then read replies in another order than it sent its commands (the Redis reply desync of
 * docs/operations.md §Stalls).
 */
export type FaultMode = 'pass' | 'blackhole' | 'halfopen' | 'reset' | 'slow';

/** One direction of a connection: the chunks held, in the order they came, each with when it may go. */
interface Lane {
  held: { at: number; chunk: Buffer }[];
  timer: NodeJS.Timeout | null;
}

interface Pair {
  client: net.Socket;
  server: net.Socket | null;
  /** Dead pairs forward nothing, ever again. */
  dead: boolean;
  up: Lane;
  down: Lane;
}

export class FaultProxy {
  private readonly pairs = new Set<Pair>();
  private mode: FaultMode = 'pass';
  private delayMs = 0;
  /** Connections accepted in all (each client connect counts once). */
  accepted = 0;

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listens on `port` (0: any free one) of 127.0.0.1 and forwards to `target`. */
  static async start(target: { host: string; port: number }, port = 0): Promise<FaultProxy> {
    let proxy: FaultProxy | null = null;
    const server = net.createServer((client) => proxy?.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    proxy = new FaultProxy(server, (server.address() as net.AddressInfo).port, target);
    return proxy;
  }

  get current(): FaultMode {
    return this.mode;
  }

  /** Client connections open now (dead ones included). */
  get open(): number {
    return this.pairs.size;
  }

  /** Open connections that still forward. */
  get live(): number {
    let n = 0;
    for (const p of this.pairs) if (!p.dead) n++;
    return n;
  }

  blackHole(): void {
    this.mode = 'blackhole';
    for (const p of this.pairs) p.dead = true;
  }

  halfOpen(): void {
    this.mode = 'halfopen';
    for (const p of this.pairs) {
      p.dead = true;
      p.server?.destroy();
      p.server = null;
    }
  }

  reset(): void {
    this.mode = 'reset';
    for (const p of [...this.pairs]) this.drop(p, true);
  }

  slow(ms: number): void {
    this.mode = 'slow';
    this.delayMs = ms;
  }

  heal(): void {
    this.mode = 'pass';
    this.delayMs = 0;
    // Held chunks go when they are due, and whatever comes meanwhile waits behind them.
  }

  async close(): Promise<void> {
    for (const p of [...this.pairs]) this.drop(p, false);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    client.on('error', () => undefined);
    if (this.mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, server: null, dead: this.mode === 'blackhole' || this.mode === 'halfopen', up: { held: [], timer: null }, down: { held: [], timer: null } };
    this.pairs.add(pair);
    client.on('close', () => this.drop(pair, false));
    client.on('data', (chunk: Buffer) => this.forward(pair, chunk, 'up'));
    if (pair.dead) return; // accepted, and forwarded nowhere
    const server = net.connect(this.target.port, this.target.host);
    pair.server = server;
    server.on('error', () => undefined);
    server.on('data', (chunk: Buffer) => this.forward(pair, chunk, 'down'));
    // The engine closed: pass it on, unless the pair is already dead (then the client hears nothing).
    server.on('close', () => {
      if (!pair.dead) this.drop(pair, false);
    });
  }

  private forward(pair: Pair, chunk: Buffer, way: 'up' | 'down'): void {
    if (pair.dead) return;
    const lane = pair[way];
    const now = Date.now();
    const at = this.mode === 'slow' ? now + this.delayMs : now;
    // Nothing held before it and no delay: straight on. Otherwise behind the last one held.
    if (lane.held.length === 0 && at <= now) {
      this.write(pair, way, chunk);
      return;
    }
    lane.held.push({ at: Math.max(at, lane.held.at(-1)?.at ?? at), chunk });
    if (lane.timer === null) this.drainLater(pair, way);
  }

  private write(pair: Pair, way: 'up' | 'down', chunk: Buffer): void {
    if (pair.dead) return;
    (way === 'up' ? pair.server : pair.client)?.write(chunk);
  }

  /** Writes a lane's chunks that are due, in order, then waits for the next one's time. */
  private drainLater(pair: Pair, way: 'up' | 'down'): void {
    const lane = pair[way];
    const next = lane.held[0];
    if (next === undefined || pair.dead) return;
    lane.timer = setTimeout(() => {
      lane.timer = null;
      const now = Date.now();
      while (lane.held.length > 0 && lane.held[0]!.at <= now) this.write(pair, way, lane.held.shift()!.chunk);
      this.drainLater(pair, way);
    }, Math.max(0, next.at - Date.now()));
  }

  private drop(pair: Pair, reset: boolean): void {
    if (!this.pairs.delete(pair)) return;
    pair.dead = true;
    for (const lane of [pair.up, pair.down]) {
      if (lane.timer !== null) clearTimeout(lane.timer);
      lane.held.length = 0;
    }
    if (reset) {
      pair.client.resetAndDestroy();
      pair.server?.resetAndDestroy();
    } else {
      pair.client.destroy();
      pair.server?.destroy();
    }
  }
}
