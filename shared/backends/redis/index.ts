import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../../config.js';
import type { OperatorStores } from '../operators.js';
import type {
  CommandStore,
  LastReportSink,
  LockoutStore,
  ProviderStore,
  SessionStore,
  TripStore,
} from '../types.js';
import { createRedisCommandStore, COMMAND_CANCEL, COMMAND_CANCEL_ALL, COMMAND_DELIVER, COMMAND_ENQUEUE, COMMAND_FINISH, COMMAND_STATUS } from './commands.js';
import { describeEndpoint, makeGuard, RedisUnavailableError, type LuaScript, type RedisLogger } from './connection.js';
import { DEDUPE_CLAIM, DEDUPE_RELEASE_OWN, RedisDedupeIndex } from './dedupe.js';
import { RedisKeys } from './keys.js';
import { createRedisOperatorStores } from './operator-tokens.js';
import { createRedisLockoutStore, LOCKOUT_RECORD } from './lockouts.js';
import { createRedisProviderStore, PROVIDER_CREATE, PROVIDER_DELETE, PROVIDER_LIST, PROVIDER_UPDATE } from './providers.js';
import { POISON_ADD, POISON_REMOVE, RedisPoisonStore } from './poison.js';
import { createRedisSessionStore, SESSION_CREATE, SESSION_DESTROY, SESSION_END_ALL, SESSION_TOUCH } from './sessions.js';
import { createRedisLastReportSink, createRedisTripStore, LAST_REPORT_RECORD, TRIP_LIST } from './trips.js';

export { RedisDataError, RedisUnavailableError, type RedisLogger } from './connection.js';
export { RedisDedupeIndex } from './dedupe.js';
export { RedisKeys } from './keys.js';
export { poisonId, RedisPoisonStore } from './poison.js';

export interface RedisStoresOptions {
  /**
   * redis://[user:password@]host:port[/db]. With `sentinels` its host is not used (the Sentinels name
   * the primary); its user, password and database still are. Needed when `sentinels` is not given.
   */
  url?: string;
  /** Sentinels asked for the current primary: the client follows a failover by itself. */
  sentinels?: readonly { host: string; port: number }[];
  /** The primary's name the Sentinels monitor (default 'mymaster'). */
  sentinelName?: string;
  sentinelPassword?: string;
  /**
   * Replicas that must acknowledge a queued command (WAIT) before enqueue resolves; 0 (default) =
   * do not wait. When fewer acknowledge within `commandWaitMs`, enqueue fails as unavailable.
   */
  commandReplicas?: number;
  /** Longest WAIT for those replicas (default 1000 ms). */
  commandWaitMs?: number;
  /** Prefix of every key (default 'gw:'); lets several deployments or test runs share one Redis. */
  keyPrefix?: string;
  /** Told when the connection is lost and when it is back (default: console.warn). */
  logger?: RedisLogger;
  /** A command without a reply after this long fails (default 2000 ms). */
  commandTimeoutMs?: number;
  /** TCP connect timeout of each (re)connection attempt (default 1000 ms). */
  connectTimeoutMs?: number;
  /** How long healthy() waits for PONG (default 1000 ms). */
  healthTimeoutMs?: number;
}

export interface RedisStores {
  /** The ioredis client (health checks, the other distributed-mode modules). Keys are not prefixed by it. */
  redis: Redis;
  keys: RedisKeys;
  providers: ProviderStore;
  lockouts: LockoutStore;
  sessions: SessionStore;
  commands: CommandStore;
  trips: TripStore;
  /** DedupeIndex, plus releaseClaims (compare-and-delete). */
  dedupe: RedisDedupeIndex;
  lastReports: LastReportSink;
  /** Messages the worker set aside. */
  poison: RedisPoisonStore;
  /** The admin API's operator tokens, audit trail and token-guess lockouts. */
  operators: OperatorStores;
  /** PING answered within healthTimeoutMs. */
  healthy(): Promise<boolean>;
  /** QUIT (waits for pending replies, at most 2 s), then closes the socket. Idempotent. */
  close(): Promise<void>;
}

const ALL_SCRIPTS: readonly LuaScript[] = [
  PROVIDER_CREATE,
  PROVIDER_UPDATE,
  PROVIDER_LIST,
  PROVIDER_DELETE,
  LOCKOUT_RECORD,
  SESSION_CREATE,
  SESSION_TOUCH,
  SESSION_DESTROY,
  SESSION_END_ALL,
  COMMAND_ENQUEUE,
  COMMAND_DELIVER,
  COMMAND_STATUS,
  COMMAND_FINISH,
  COMMAND_CANCEL,
  COMMAND_CANCEL_ALL,
  TRIP_LIST,
  LAST_REPORT_RECORD,
  DEDUPE_CLAIM,
  DEDUPE_RELEASE_OWN,
  POISON_ADD,
  POISON_REMOVE,
];

/** `SET ... NX ... GET` needs 7.0. */
const MIN_REDIS_MAJOR = 7;

const consoleLogger: RedisLogger = {
  warn(obj, msg) {
    console.warn(msg, obj);
  },
};

/** Resolves with the promise's value, or `fallback` after `ms`; the promise's rejection is observed. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
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
export function redisClientOptions(options: RedisStoresOptions): RedisOptions {
  return {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    commandTimeout: options.commandTimeoutMs ?? 2000,
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
export function redisSentinelOptions(options: RedisStoresOptions): RedisOptions {
  const sentinels = options.sentinels ?? [];
  const base = redisClientOptions(options);
  const credentials = options.url === undefined ? {} : urlCredentials(options.url);
  return {
    ...base,
    ...credentials,
    sentinels: sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: options.sentinelName ?? 'mymaster',
    ...(options.sentinelPassword === undefined ? {} : { sentinelPassword: options.sentinelPassword }),
    role: 'master',
    failoverDetector: true,
    sentinelCommandTimeout: options.connectTimeoutMs ?? 1000,
    sentinelRetryStrategy: (times) => Math.min(100 * times, 500),
    // Sentinels learn of each other; the configured list stays the one asked first.
    updateSentinels: true,
  };
}

/** User, password and database number of a redis:// URL (its host is the Sentinels' to choose). */
function urlCredentials(url: string): Pick<RedisOptions, 'username' | 'password' | 'db'> {
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
function keepConnecting(client: Redis, closed: () => boolean, logger: RedisLogger, endpoint: string, delayMs = 100): void {
  client.on('end', () => {
    if (closed()) return;
    logger.warn({ endpoint }, 'Redis client ended by itself; connecting it again');
    setTimeout(() => {
      // A failed attempt ends the client again, which comes back here.
      if (!closed() && client.status === 'end') client.connect().catch(() => undefined);
    }, delayMs).unref();
  });
}

/** The client of either form: Sentinels when given, else the URL. */
function createRedisClient(options: RedisStoresOptions): Redis {
  if (options.sentinels !== undefined && options.sentinels.length > 0) return new Redis(redisSentinelOptions(options));
  if (options.url === undefined) throw new Error('Redis needs a URL or Sentinels.');
  return new Redis(options.url, redisClientOptions(options));
}

/** host:port (or the Sentinels and the primary's name) without credentials, for messages. */
function endpointOf(options: RedisStoresOptions): string {
  if (options.sentinels !== undefined && options.sentinels.length > 0) {
    return `sentinel://${options.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}/${options.sentinelName ?? 'mymaster'}`;
  }
  return describeEndpoint(options.url ?? '');
}

/** The Redis options of a configuration: REDIS_URL or REDIS_SENTINELS, and the command durability. */
export function redisStoresOptionsFromConfig(config: Config, logger: RedisLogger): RedisStoresOptions {
  return {
    ...(config.redisUrl === null ? {} : { url: config.redisUrl }),
    ...(config.redisSentinels === null
      ? {}
      : {
          sentinels: config.redisSentinels,
          sentinelName: config.redisSentinelName,
          ...(config.redisSentinelPassword === null ? {} : { sentinelPassword: config.redisSentinelPassword }),
        }),
    keyPrefix: config.redisKeyPrefix,
    logger,
    commandReplicas: config.redisCommandReplicas,
    commandWaitMs: config.redisCommandWaitMs,
  };
}

/**
 * Opens the Redis-backed stores of the distributed mode. Fails (and closes the client) when Redis
 * cannot be reached or is older than 7.0. Everything two gateways must agree on lives in Redis, except
 * event ids (Kafka, kafka-ids.ts).
 */
export async function openRedisStores(options: RedisStoresOptions): Promise<RedisStores> {
  const endpoint = endpointOf(options);
  const logger = options.logger ?? consoleLogger;
  const keys = new RedisKeys(options.keyPrefix ?? 'gw:');
  const guard = makeGuard(endpoint);

  const redis = createRedisClient(options);
  // Without a listener ioredis would print every failed reconnect; log a lost connection once and
  // its recovery once. The process never dies of it: calls reject, the client reconnects.
  let down = false;
  redis.on('error', (err: unknown) => {
    if (down) return;
    down = true;
    logger.warn({ endpoint, err: err instanceof Error ? err.message : String(err) }, 'Redis connection lost; calls fail until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.warn({ endpoint }, 'Redis connection restored');
  });

  // Set before this module disconnects a client itself: only then may it stay ended.
  let closed = false;
  keepConnecting(redis, () => closed, logger, endpoint);

  try {
    const info = await guard('open', () => redis.info('server'));
    const version = /^redis_version:(\S+)/m.exec(info)?.[1] ?? '0';
    if (Number.parseInt(version, 10) < MIN_REDIS_MAJOR) {
      throw new Error(`Redis at ${endpoint} is ${version}; the gateway needs Redis ${MIN_REDIS_MAJOR}.0 or later (SET NX GET).`);
    }
    // Load the scripts up front so the first calls are plain EVALSHA (they fall back to EVAL anyway).
    const load = redis.pipeline();
    for (const script of ALL_SCRIPTS) load.script('LOAD', script.lua);
    const loaded = await guard('open', () => load.exec());
    for (const [err] of loaded ?? []) if (err !== null) throw err;
  } catch (err) {
    closed = true;
    redis.disconnect();
    if (err instanceof RedisUnavailableError) throw err;
    throw err instanceof Error ? err : new Error(String(err));
  }

  const healthTimeoutMs = options.healthTimeoutMs ?? 1000;
  let closing: Promise<void> | null = null;
  // WAIT blocks the connection it runs on and covers the writes made on it, so queued commands get
  // a connection of their own: a slow replica then delays operators' commands, never an insert.
  const commandReplicas = options.commandReplicas ?? 0;
  const durable = commandReplicas > 0 ? redis.duplicate({ connectionName: 'gateway-commands' }) : null;
  durable?.on('error', () => {
    // Reported once by the main connection's listener; calls on this one reject and it reconnects.
  });
  if (durable !== null) keepConnecting(durable, () => closed, logger, endpoint);
  const durableWrites = durable === null ? null : { redis: durable, replicas: commandReplicas, waitMs: options.commandWaitMs ?? 1000 };

  return {
    redis,
    keys,
    providers: createRedisProviderStore(redis, keys, guard),
    lockouts: createRedisLockoutStore(redis, keys, guard),
    sessions: createRedisSessionStore(redis, keys, guard),
    commands: createRedisCommandStore(redis, keys, guard, durableWrites),
    trips: createRedisTripStore(redis, keys, guard),
    dedupe: new RedisDedupeIndex(redis, keys, guard),
    lastReports: createRedisLastReportSink(redis, keys, guard),
    poison: new RedisPoisonStore(redis, keys, guard),
    operators: createRedisOperatorStores(redis, keys.prefix, guard),
    async healthy() {
      if (closing !== null) return false;
      try {
        return (await within(redis.ping(), healthTimeoutMs, 'timeout')) === 'PONG';
      } catch {
        return false;
      }
    },
    close() {
      closed = true;
      closing ??= (async () => {
        try {
          if (redis.status === 'ready') await within(redis.quit(), 2000, 'timeout');
        } catch {
          // Closing anyway.
        } finally {
          redis.disconnect();
          durable?.disconnect();
        }
      })();
      return closing;
    },
  };
}
