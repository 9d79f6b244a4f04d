import { readFileSync } from 'node:fs';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../../config/index.js';
import { redisClusterOptions } from './cluster.js';
import { describeEndpoint, type RedisClient, type RedisLogger } from './connection.js';

/**
 * The Redis client of the scale-out mode: its options (timeouts, reconnection, Sentinels, Redis
 * Cluster in cluster.ts), how it is made, and how a configuration becomes them. The stores on top
 * of it: index.ts.
 */

/** Where Redis is and how long a connection may take to answer. */
export interface RedisConnectionOptions {
  /**
   * redis://[user:password@]host:port[/db]. With `sentinels` or `clusterNodes` its host is not used
   * (the Sentinels name the primary, the cluster its nodes); its scheme (rediss: TLS), user and
   * password still are, and its database with Sentinels. Needed when neither is given.
   */
  url?: string;
  /** Redis Cluster: nodes asked for the cluster's layout (any of them; the client finds the rest). */
  clusterNodes?: readonly { host: string; port: number }[];
  /** Sentinels asked for the current primary: the client follows a failover by itself. */
  sentinels?: readonly { host: string; port: number }[];
  /** The primary's name the Sentinels monitor (default 'mymaster'). */
  sentinelName?: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
  /** Reach the Sentinels over TLS (verified against `tlsCa`). */
  sentinelTls?: boolean;
  /** ACL user and password; override those inside `url` (a password in both is refused). */
  username?: string;
  password?: string;
  /**
   * PEM of the CA that signed the servers' certificates (else the system's). TLS to the data nodes
   * is on with a rediss:// URL, with or without Sentinels, and in a cluster.
   */
  tlsCa?: string;
  /**
   * A command without a reply after this long fails (default 2000 ms), and a connection that
   * received nothing for this long while a command waits on it is closed and made anew.
   */
  commandTimeoutMs?: number;
  /** TCP connect timeout of each (re)connection attempt (default 1000 ms). */
  connectTimeoutMs?: number;
  /** Idle time before the first TCP keep-alive probe (default 5000 ms). */
  keepAliveMs?: number;
}

/** Resolves with the promise's value, or `fallback` after `ms`; the promise's rejection is observed. */
export function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/**
 * Connection behaviour (the choice for a gateway that must answer -5 quickly rather than hang):
 * - a connection cannot outlive a command's deadline: when nothing comes back on it for
 *   commandTimeoutMs while a command waits (a stalled Redis, a black-holed path, a peer gone
 *   without a word), it is destroyed and a new one is made (`socketTimeout`); ioredis alone keeps
 *   the socket after a command timeout, and every later command would go into it too. A reply that
 *   comes late cannot be matched to its command (Redis replies carry no id), so the connection is
 *   never reused after a timeout. TCP keep-alive (keepAliveMs) also closes idle connections to a
 *   peer that vanished;
 * - commands issued while disconnected wait in ioredis' offline queue, and fail after one reconnect
 *   attempt (`maxRetriesPerRequest: 1`): with reconnects every 100-500 ms and a 1 s connect
 *   timeout, a call fails within about 0.5 s when Redis refuses connections and about 2-3 s when it
 *   does not answer at all;
 * - a command sent on a connection that silently died, or whose reply was lost when the connection
 *   dropped, fails after commandTimeoutMs and is not resent (it may have been applied once; it is
 *   never applied twice);
 * - the client keeps reconnecting forever, so service resumes by itself when Redis is back;
 * - failures surface as RedisUnavailableError (Redis error replies and corrupt data are not wrapped).
 */
export function redisClientOptions(options: RedisConnectionOptions): RedisOptions {
  return {
    ...credentialsOf(options),
    ...(usesTls(options) ? { tls: tlsOf(options) } : {}),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    // Commands issued in one event-loop turn go out as one write, and their replies come back in
    // one: Redis reads and answers them in one system call each way instead of one per command,
    // most of its CPU for small commands (bench/RESULTS.md §Redis tier). A request's dedupe claims,
    // and every concurrent request's calls, share a round trip.
    enableAutoPipelining: true,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    commandTimeout: options.commandTimeoutMs ?? 2000,
    socketTimeout: options.commandTimeoutMs ?? 2000,
    keepAlive: options.keepAliveMs ?? 5000,
    retryStrategy: (times) => Math.min(100 * times, 500),
    // Never resend a command whose reply was lost with the connection: it may have run (a second
    // run of a script would enqueue a command twice, count a failure twice...). It fails instead
    // (after commandTimeoutMs) and the caller answers "retry later".
    autoResendUnfulfilledCommands: false,
    // Each instance reports its own connection state; keep the client name recognisable in CLIENT LIST.
    connectionName: 'gateway',
    // A primary demoted to replica (a failover while we stayed connected) answers writes READONLY:
    // drop the connection so it is made again to whichever node is primary now (not resent).
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
  };
}

/**
 * With Sentinels: the client asks them for the primary on every (re)connection, checks that the node
 * it reached really is the primary, and subscribes to their +switch-master announcements so that it
 * reconnects as soon as they promote a replica (failoverDetector) rather than when the old primary's
 * socket times out. Sentinels are asked again every 100-500 ms while none answers.
 */
export function redisSentinelOptions(options: RedisConnectionOptions): RedisOptions {
  const sentinels = options.sentinels ?? [];
  const base = redisClientOptions(options);
  const credentials = options.url === undefined ? {} : urlCredentials(options.url);
  return {
    ...base,
    ...credentials,
    ...credentialsOf(options),
    sentinels: sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: options.sentinelName ?? 'mymaster',
    ...(options.sentinelUsername === undefined ? {} : { sentinelUsername: options.sentinelUsername }),
    ...(options.sentinelPassword === undefined ? {} : { sentinelPassword: options.sentinelPassword }),
    // The nodes the Sentinels name are reached as the URL says (rediss:// = TLS), the Sentinels as REDIS_SENTINEL_TLS says.
    ...(usesTls(options) ? { enableTLSForSentinelMode: true } : {}),
    ...(options.sentinelTls === true ? { sentinelTLS: tlsOf(options) } : {}),
    role: 'master',
    failoverDetector: true,
    sentinelCommandTimeout: options.connectTimeoutMs ?? 1000,
    sentinelRetryStrategy: (times) => Math.min(100 * times, 500),
    // Sentinels learn of each other; the configured list stays the one asked first.
    updateSentinels: true,
  };
}

/** TLS to the data nodes: a rediss:// URL. */
export function usesTls(options: RedisConnectionOptions): boolean {
  return options.url?.startsWith('rediss://') === true;
}

export function tlsOf(options: RedisConnectionOptions): NonNullable<RedisOptions['tls']> {
  return { minVersion: 'TLSv1.2', ...(options.tlsCa === undefined ? {} : { ca: options.tlsCa }) };
}

/** REDIS_USERNAME / REDIS_PASSWORD over the URL's; a password in both places is a mistake worth stopping on. */
export function credentialsOf(options: RedisConnectionOptions): Pick<RedisOptions, 'username' | 'password'> {
  if (options.password !== undefined && options.url !== undefined && new URL(options.url).password !== '') {
    throw new Error('Redis: a password in REDIS_URL and REDIS_PASSWORD too; keep it in REDIS_PASSWORD (or REDIS_PASSWORD_FILE) only.');
  }
  return {
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
  };
}

/** User, password and database number of a redis:// URL (its host is the Sentinels' or the cluster's to choose). */
export function urlCredentials(url: string): Pick<RedisOptions, 'username' | 'password' | 'db'> {
  const u = new URL(url);
  const db = Number.parseInt(u.pathname.replace(/^\//, ''), 10);
  return {
    ...(u.username === '' ? {} : { username: decodeURIComponent(u.username) }),
    ...(u.password === '' ? {} : { password: decodeURIComponent(u.password) }),
    ...(Number.isSafeInteger(db) ? { db } : {}),
  };
}

/**
 * ioredis can end a client for good while Redis is merely failing over: in Sentinel mode its
 * failover detector, hearing +switch-master while the client is between asking a Sentinel and
 * connecting, makes the connector throw "Connection is closed", and the client goes to `end`
 * instead of retrying. Every later call then fails at once, forever (seen in the HA failover test
 * under load: one gateway answered -5 for good while the other resumed; redis/ioredis#1683 reports
 * the same symptom). A client ended by anything but this module is connected again.
 */
export function keepConnecting(client: RedisClient, closed: () => boolean, logger: RedisLogger, endpoint: string, delayMs = 100): void {
  client.on('end', () => {
    if (closed()) return;
    logger.warn({ endpoint }, 'Redis client ended by itself; connecting it again');
    setTimeout(() => {
      // A failed attempt ends the client again, which comes back here.
      if (!closed() && client.status === 'end') client.connect().catch(() => undefined);
    }, delayMs).unref();
  });
}

/** The client of the form configured: a cluster, else Sentinels, else the URL. */
export function createRedisClient(options: RedisConnectionOptions): RedisClient {
  if (isCluster(options)) return new Cluster(options.clusterNodes.map((n) => ({ host: n.host, port: n.port })), redisClusterOptions(options));
  if (options.sentinels !== undefined && options.sentinels.length > 0) return new Redis(redisSentinelOptions(options));
  if (options.url === undefined) throw new Error('Redis needs a URL or Sentinels.');
  return new Redis(options.url, redisClientOptions(options));
}

export function isCluster(options: RedisConnectionOptions): options is RedisConnectionOptions & { clusterNodes: readonly { host: string; port: number }[] } {
  return options.clusterNodes !== undefined && options.clusterNodes.length > 0;
}

/**
 * Whether Redis answers PING on a connection made for this question alone (the stuck watchdog's
 * check), through the Sentinels when configured; a cluster must have every primary answer. The
 * client is closed after.
 */
export async function redisAnswers(options: RedisConnectionOptions, timeoutMs = 3000): Promise<boolean> {
  const client = createRedisClient({ ...options });
  client.on('error', () => undefined);
  try {
    if (client instanceof Cluster) await clusterReady(client, timeoutMs);
    return await within(pingAll(client), timeoutMs, false);
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** PING answered by the node (one node or Sentinel form), or by every primary of a cluster whose layout the client knows. */
export async function pingAll(client: RedisClient): Promise<boolean> {
  if (!(client instanceof Cluster)) {
    await client.ping();
    return true;
  }
  const primaries = client.status === 'ready' ? client.nodes('master') : [];
  if (primaries.length === 0) return false;
  await Promise.all(primaries.map((n) => n.ping()));
  return true;
}

/** Resolves once a cluster client knows the cluster's layout, or rejects after `ms` or when it ends. */
export function clusterReady(cluster: Cluster, ms: number): Promise<void> {
  if (cluster.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no usable cluster layout within ${ms} ms`)), ms);
    const onReady = (): void => done(null);
    const onEnd = (): void => done(new Error('the cluster client ended'));
    function done(err: Error | null): void {
      clearTimeout(timer);
      cluster.off('ready', onReady);
      cluster.off('end', onEnd);
      if (err === null) resolve();
      else reject(err);
    }
    cluster.once('ready', onReady);
    cluster.once('end', onEnd);
  });
}

/** INFO <section> of the node (one node or Sentinel form) or of every primary of a cluster. */
export async function infoOfPrimaries(client: RedisClient, section: string): Promise<string[]> {
  if (!(client instanceof Cluster)) return [await client.info(section)];
  return Promise.all(client.nodes('master').map((n) => n.info(section)));
}

/** host:port (or the Sentinels and the primary's name, or the cluster's nodes) without credentials, for messages. */
export function endpointOf(options: RedisConnectionOptions): string {
  if (isCluster(options)) return `cluster://${options.clusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  if (options.sentinels !== undefined && options.sentinels.length > 0) {
    return `sentinel://${options.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}/${options.sentinelName ?? 'mymaster'}`;
  }
  return describeEndpoint(options.url ?? '');
}

/** The Redis options of a configuration: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES, and the command durability. */
export function redisStoresOptionsFromConfig(redis: Config['redis'], logger: RedisLogger): RedisConnectionOptions & { keyPrefix: string; logger: RedisLogger; commandReplicas: number; commandWaitMs: number } {
  return {
    commandTimeoutMs: redis.commandTimeoutMs,
    connectTimeoutMs: redis.connectTimeoutMs,
    keepAliveMs: redis.keepAliveMs,
    ...(redis.url === null ? {} : { url: redis.url }),
    ...(redis.username === null ? {} : { username: redis.username }),
    ...(redis.password === null ? {} : { password: redis.password }),
    ...(redis.tlsCaFile === null ? {} : { tlsCa: readFileSync(redis.tlsCaFile, 'utf8') }),
    ...(redis.clusterNodes === null ? {} : { clusterNodes: redis.clusterNodes }),
    ...(redis.sentinels === null
      ? {}
      : {
          sentinels: redis.sentinels,
          sentinelName: redis.sentinelName,
          ...(redis.sentinelUsername === null ? {} : { sentinelUsername: redis.sentinelUsername }),
          ...(redis.sentinelPassword === null ? {} : { sentinelPassword: redis.sentinelPassword }),
          sentinelTls: redis.sentinelTls === 'on',
        }),
    keyPrefix: redis.keyPrefix,
    logger,
    commandReplicas: redis.commandReplicas,
    commandWaitMs: redis.commandWaitMs,
  };
}

