import type { Connection, ConnectionPool } from '@platformatic/kafka';
import { TimeoutError, withTimeout } from '../../util/async.js';
import { isKafkaTimeout } from './errors.js';
import { loadedKafkaModule } from './library.js';

/** Idle time before the first TCP keep-alive probe on every connection of a Kafka client. */
export const DEFAULT_KEEPALIVE_MS = 5000;

interface Broker {
  host: string;
  port: number;
}

/** What ConnectionWatch needs of a client: its pool, its connect events and what it knows of the brokers. */
interface WatchedClient {
  readonly connections: ConnectionPool;
  readonly currentMetadata: { brokers: Map<number, Broker> } | undefined;
  on(event: 'client:broker:connect', listener: (payload: { broker: Broker; connection: Connection }) => void): unknown;
}

type BootstrapGetter = (callback: (error: Error | null, connection?: Connection) => void) => void;

/** How long a broker whose connection was dropped silent is asked for metadata only after the others. */
const SUSPECT_MS = 60_000;

const brokerKey = (b: Broker): string => `${b.host}:${b.port}`;

function parseBroker(address: string): Broker {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(address.slice(i + 1)) };
}

/** How long after a timeout a connection's close is taken as the library ending it for that timeout. */
const SILENT_CLOSE_WINDOW_MS = 1000;
/** A connection that never received a byte is spared this long: another request may just have opened it. */
const YOUNG_MS = 200;
/** How long a client's own close may take (LeaveGroup, in-flight requests) before its sockets are destroyed. */
export const CLOSE_GRACE_MS = 2000;

/**
 * The connections of a client (and of extra pools it uses): TCP keep-alive on each socket, and
 * when each last received a byte. After a request timed out, the connections that stayed silent
 * since it was sent are destroyed (dropSilent): a stalled peer or a black-holed path leaves a
 * connection open with nothing coming back. @platformatic/kafka 2.x destroys the connection of a
 * request that hit its own timeout, but our call deadlines (`within`) can end a call first, and a
 * late reply cannot be matched anymore either (the library drops the correlation), so a silent
 * connection is never reused. Either way, the broker behind a connection that ended silent is
 * asked for metadata last for a while. Keep-alive catches a peer that vanished without a word;
 * only the deadline catches a path that still acknowledges bytes and forwards nothing.
 */
export class ConnectionWatch {
  private readonly lastRead = new WeakMap<Connection, number>();
  private readonly connectedAt = new WeakMap<Connection, number>();
  private readonly brokerOf = new WeakMap<Connection, string>();
  private readonly pools = new Set<ConnectionPool>();
  /** Brokers a silent connection was dropped from, and when: asked for metadata last. */
  private readonly suspects = new Map<string, number>();
  /**
   * When the latest timed-out request was sent: a connection the library closes for that timeout
   * (its socket's close comes a moment after the error) and silent since then makes its broker suspect.
   */
  private lastTimeoutSince = Number.NEGATIVE_INFINITY;
  /** Connections destroyed by this watch so far (tests, logs). */
  dropped = 0;

  constructor(private readonly keepAliveMs: number = DEFAULT_KEEPALIVE_MS) {}

  /**
   * Watches a client's connections. With its bootstrap brokers it also chooses where the client
   * asks for metadata: the library asks the first bootstrap broker it can connect to, and a stalled
   * broker still accepts connections (its kernel does) while answering nothing, so every metadata
   * request of every client would go to it for as long as it stalls. Brokers whose connection was
   * dropped silent are asked last instead, until one of their connections answers again.
   */
  client(client: WatchedClient, bootstrap?: readonly string[]): void {
    client.on('client:broker:connect', ({ broker, connection }) => this.adopt(connection, broker));
    this.pools.add(client.connections);
    const loaded = loadedKafkaModule();
    if (bootstrap === undefined || loaded === null) return;
    const configured = bootstrap.map(parseBroker);
    // The library's protected hook for this (a symbol it exports for subclasses), set on the instance.
    (client as unknown as Record<symbol, BootstrapGetter>)[loaded.kGetBootstrapConnection] = (callback) => {
      const discovered = client.currentMetadata === undefined ? [] : [...client.currentMetadata.brokers.values()];
      const seen = new Set<string>();
      const candidates = [...configured, ...discovered].filter((b) => !seen.has(brokerKey(b)) && seen.add(brokerKey(b)));
      client.connections.getFirstAvailable(this.answeringFirst(candidates), callback);
    };
  }

  pool(pool: ConnectionPool): void {
    pool.on('connect', ({ broker, connection }) => this.adopt(connection, broker));
    this.pools.add(pool);
  }

  /** The brokers in the same order, those suspected of stalling after the others. */
  answeringFirst<B extends Broker>(brokers: B[]): B[] {
    if (this.suspects.size === 0) return brokers;
    const now = performance.now();
    const suspect = (b: B): boolean => now - (this.suspects.get(brokerKey(b)) ?? Number.NEGATIVE_INFINITY) < SUSPECT_MS;
    return [...brokers.filter((b) => !suspect(b)), ...brokers.filter(suspect)];
  }

  private adopt(connection: Connection, broker: Broker): void {
    const socket = connection.socket;
    const key = brokerKey(broker);
    this.connectedAt.set(connection, performance.now());
    this.brokerOf.set(connection, key);
    socket.setKeepAlive(true, this.keepAliveMs);
    socket.on('data', () => {
      this.lastRead.set(connection, performance.now());
      if (this.suspects.size > 0) this.suspects.delete(key);
    });
    socket.once('close', () => {
      const now = performance.now();
      const read = this.lastRead.get(connection) ?? Number.NEGATIVE_INFINITY;
      if (now - this.lastTimeoutSince < SILENT_CLOSE_WINDOW_MS && read <= this.lastTimeoutSince) this.suspects.set(key, now);
    });
  }

  /**
   * Destroys every open connection that received nothing since `since` (performance.now()), or
   * nothing at all while older than YOUNG_MS (the request that timed out may have opened it).
   */
  dropSilent(since: number): number {
    let n = 0;
    const now = performance.now();
    for (const pool of this.pools) {
      for (const [, connection] of pool) {
        const socket = connection.socket as Connection['socket'] | undefined;
        if (socket === undefined || socket.destroyed) continue;
        const read = this.lastRead.get(connection);
        const silent = read === undefined ? (this.connectedAt.get(connection) ?? 0) <= now - YOUNG_MS || since === Number.POSITIVE_INFINITY : read <= since;
        if (silent) {
          socket.destroy();
          const key = this.brokerOf.get(connection);
          if (key !== undefined && since !== Number.POSITIVE_INFINITY) this.suspects.set(key, performance.now());
          n++;
        }
      }
    }
    this.dropped += n;
    if (since !== Number.POSITIVE_INFINITY) this.lastTimeoutSince = since;
    return n;
  }

  /**
   * Waits up to `graceMs` for a client's own close (a consumer leaves its group, requests in
   * flight are answered), then destroys whatever connection is still open: a stalled broker must
   * not hold a shutdown or a session restart. Never rejects; the timer never outlives the close.
   */
  async closeWithin(closing: Promise<unknown>, graceMs: number = CLOSE_GRACE_MS): Promise<void> {
    await withTimeout(closing, graceMs, 'Kafka client close').catch(() => undefined);
    this.dropSilent(Number.POSITIVE_INFINITY);
  }

  /**
   * `call` under a deadline of `ms`: when it does not answer in time, or the library reports a
   * request timeout, the silent connections are dropped before the error is passed on.
   */
  async within<T>(call: () => Promise<T>, ms: number, what: string): Promise<T> {
    const since = performance.now();
    try {
      return await withTimeout(call(), ms, what);
    } catch (error) {
      if (error instanceof TimeoutError || isKafkaTimeout(error)) this.dropSilent(since);
      throw error;
    }
  }
}
