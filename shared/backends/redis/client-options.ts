import type { ClusterOptions, RedisOptions } from 'ioredis';

/**
 * The ioredis options of each form of the scale-out mode's Redis: one node (a URL), a primary the
 * Sentinels name, or Redis Cluster; their TLS and credentials. How the client is made of them:
 * client.ts.
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
 * Redis Cluster (REDIS_CLUSTER_NODES): ioredis' own cluster client finds the nodes from any of the
 * ones given, sends each command to the primary of its key's hash slot, follows MOVED and ASK
 * (a slot moved or moving) and asks for the layout again after a redirection, a failed node or
 * every slotsRefreshInterval. What it must not do is send a command twice: by default it resends
 * a command whose connection closed before the reply came ("Connection is closed", after a
 * failover delay), and that command may have been applied (a second delivery counted, a command
 * queued twice). `retryDelayOnFailover: 0` turns that resend off: the call fails, and the insert
 * answers -5. Redirections, TRYAGAIN and CLUSTERDOWN are still followed: those replies say the
 * command was not applied.
 *
 * Each node connection has the one-node form's deadlines (redisClientOptions: commandTimeout, a
 * connection silent that long is dropped, keep-alive), its TLS and its ACL user. Commands are
 * never queued while the cluster as a whole is unreachable (`enableOfflineQueue: false`): they fail
 * at once, as in the one-node form when reconnecting fails, instead of waiting without a bound and
 * running long after their caller gave up.
 */
export function redisClusterOptions(options: RedisConnectionOptions): ClusterOptions {
  const {
    retryStrategy: _nodeRetry,
    enableOfflineQueue: _nodeQueue,
    enableAutoPipelining: _nodePipelining,
    ...node
  }: RedisOptions = redisClientOptions(options);
  const fromUrl = options.url === undefined ? {} : urlCredentials(options.url);
  return {
    redisOptions: {
      ...node,
      // A cluster has database 0 only: the URL's number is not used.
      ...(fromUrl.username === undefined ? {} : { username: fromUrl.username }),
      ...(fromUrl.password === undefined ? {} : { password: fromUrl.password }),
      ...credentialsOf(options),
      ...(usesTls(options) ? { tls: tlsOf(options) } : {}),
    },
    // Commands to one node in one event-loop turn go out as one write (one pipeline per primary).
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    scaleReads: 'master',
    retryDelayOnFailover: 0,
    retryDelayOnTryAgain: 100,
    retryDelayOnClusterDown: 100,
    maxRedirections: 16,
    slotsRefreshTimeout: options.connectTimeoutMs ?? 1000,
    // A promoted replica is found by the first MOVED reply or by this refresh, whichever first.
    slotsRefreshInterval: 2000,
    // The cluster as a whole unreachable: try again every 100-500 ms, forever (as the one-node form).
    clusterRetryStrategy: (times) => Math.min(100 * times, 500),
  };
}
