import { Cluster } from 'ioredis';
import { clusterReady, createRedisClient, endpointOf, infoOfPrimaries, keepConnecting, pingAll, within } from './client.js';
import type { RedisConnectionOptions } from './client-options.js';
import type { OperatorStores } from '../operators.js';
import type {
  CommandStore,
  LockoutStore,
  ProviderStore,
  SessionStore,
  TripStore,
} from '../types.js';
import type { LastReportSink } from '../scale-out-types.js';
import { createRedisCommandStore } from './commands.js';
import { COMMAND_CANCEL, COMMAND_CANCEL_ALL, COMMAND_DELIVER, COMMAND_ENQUEUE, COMMAND_FINISH, COMMAND_NUMBER, COMMAND_STATUS } from './command-scripts.js';
import { makeGuard, RedisUnavailableError, type LuaScript, type RedisClient, type RedisLogger } from './connection.js';
import { ensureKeyLayout } from './layout.js';
import { DEDUPE_CLAIM, DEDUPE_RELEASE_OWN, RedisDedupeIndex } from './dedupe.js';
import { RedisKeys } from './keys.js';
import { createRedisOperatorStores } from './operator-tokens.js';
import { createRedisLockoutStore, LOCKOUT_RECORD } from './lockouts.js';
import { createRedisProviderStore, PROVIDER_CREATE, PROVIDER_UPDATE } from './providers.js';
import { POISON_ADD, POISON_REMOVE, RedisPoisonStore } from './poison.js';
import { createRedisSessionStore, SESSION_CREATE, SESSION_DESTROY, SESSION_END_ALL, SESSION_TOUCH } from './sessions.js';
import { createRedisLastReportSink, LAST_REPORT_RECORD, LAST_REPORT_RECORD_ON_NODE } from './last-reports.js';
import { createRedisTripStore, TRIP_LIST } from './trips.js';
import { errorMessage } from '../../util/error-message.js';

export { RedisDataError, RedisUnavailableError, type RedisClient, type RedisLogger } from './connection.js';
export { redisStoresOptionsFromConfig } from './client.js';
export { redisSentinelOptions } from './client-options.js';
export { RedisDedupeIndex } from './dedupe.js';
export { KEY_LAYOUT, RedisKeys } from './keys.js';
export { RedisPoisonStore } from './poison.js';

export interface RedisStoresOptions extends RedisConnectionOptions {
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
  /** How long healthy() waits for PONG (default 1000 ms). */
  healthTimeoutMs?: number;
}


export interface RedisStores {
  /** The ioredis client (health checks, the other scale-out modules). Keys are not prefixed by it. */
  redis: RedisClient;
  /** Redis Cluster (a script's or a transaction's keys must then share one hash slot). */
  clustered: boolean;
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
  /** PING answered within healthTimeoutMs (by every primary, in a cluster). */
  healthy(): Promise<boolean>;
  /** QUIT (waits for pending replies, at most 2 s), then closes the socket. Idempotent. */
  close(): Promise<void>;
}

const ALL_SCRIPTS: readonly LuaScript[] = [
  PROVIDER_CREATE,
  PROVIDER_UPDATE,
  LOCKOUT_RECORD,
  SESSION_CREATE,
  SESSION_TOUCH,
  SESSION_DESTROY,
  SESSION_END_ALL,
  COMMAND_NUMBER,
  COMMAND_ENQUEUE,
  COMMAND_DELIVER,
  COMMAND_STATUS,
  COMMAND_FINISH,
  COMMAND_CANCEL,
  COMMAND_CANCEL_ALL,
  TRIP_LIST,
  LAST_REPORT_RECORD,
  LAST_REPORT_RECORD_ON_NODE,
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

/**
 * Opens the Redis-backed stores of the scale-out mode, on one node, through Sentinels or on Redis
 * Cluster. Fails (and closes the client) when Redis cannot be reached or is older than 7.0; moves
 * data an earlier release wrote to today's key layout first (layout.ts). Everything two gateways
 * must agree on lives in Redis, except event ids (Kafka, ids/allocator.ts).
 */
export async function openRedisStores(options: RedisStoresOptions): Promise<RedisStores> {
  const endpoint = endpointOf(options);
  const logger = options.logger ?? consoleLogger;
  const keys = new RedisKeys(options.keyPrefix ?? 'gw:');
  const redis = createRedisClient(options);
  const clustered = redis instanceof Cluster;
  const guard = makeGuard(endpoint);

  // Without a listener ioredis would print every failed reconnect; log a lost connection once and
  // its recovery once. The process never dies of it: calls reject, the client reconnects.
  let down = false;
  // What the connection itself last failed on (a refused password, an untrusted certificate): a
  // command failing meanwhile says only that it gave up, so a failed open names this instead.
  const lastFailure: { message: string | null } = { message: null };
  const failed = (err: unknown): void => {
    lastFailure.message = errorMessage(err);
    if (down) return;
    down = true;
    logger.warn({ endpoint, err: errorMessage(err) }, 'Redis connection lost; calls fail until it is back');
  };
  redis.on('error', failed);
  // A cluster reports each node's failures apart (a shard's primary gone, the others serving).
  if (clustered) redis.on('node error', failed);
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.warn({ endpoint }, 'Redis connection restored');
  });

  // Set before this module disconnects a client itself: only then may it stay ended.
  let closed = false;
  keepConnecting(redis, () => closed, logger, endpoint);

  try {
    if (redis instanceof Cluster) await guard('open', () => clusterReady(redis, 3 * (options.connectTimeoutMs ?? 1000) + 2000));
    for (const info of await guard('open', () => infoOfPrimaries(redis, 'server'))) {
      const version = /^redis_version:(\S+)/m.exec(info)?.[1] ?? '0';
      if (Number.parseInt(version, 10) < MIN_REDIS_MAJOR) {
        throw new Error(`Redis at ${endpoint} is ${version}; the gateway needs Redis ${MIN_REDIS_MAJOR}.0 or later (SET NX GET).`);
      }
    }
    // Load the scripts up front (on every primary) so the first calls are plain EVALSHA (they fall back to EVAL anyway).
    const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
    await guard('open', () =>
      Promise.all(
        nodes.map(async (node) => {
          const load = node.pipeline();
          for (const script of ALL_SCRIPTS) load.script('LOAD', script.lua);
          for (const [err] of (await load.exec()) ?? []) if (err !== null) throw err;
        }),
      ),
    );
    await guard('open', () => ensureKeyLayout(redis, keys, { clustered, logger }));
  } catch (err) {
    closed = true;
    redis.disconnect();
    if (err instanceof RedisUnavailableError) throw lastFailure.message === null ? err : new RedisUnavailableError('open', endpoint, new Error(lastFailure.message));
    // NOAUTH, WRONGPASS, NOPERM...: Redis answered, but says too little about who asked whom.
    throw new Error(`Redis at ${endpoint} refused the gateway: ${errorMessage(err)}`, { cause: err });
  }

  const healthTimeoutMs = options.healthTimeoutMs ?? 1000;
  let closing: Promise<void> | null = null;
  // WAIT blocks the connection it runs on and covers the writes made on it, so queued commands get
  // a connection of their own: a slow replica then delays operators' commands, never an insert.
  const commandReplicas = options.commandReplicas ?? 0;
  // WAIT holds its connection silent for up to commandWaitMs: its deadline allows for that.
  const waitMs = options.commandWaitMs ?? 1000;
  const durableTimeout = waitMs + (options.commandTimeoutMs ?? 2000);
  const durableNode = { connectionName: 'gateway-commands', socketTimeout: durableTimeout, commandTimeout: durableTimeout };
  const durable: RedisClient | null =
    commandReplicas <= 0
      ? null
      : redis instanceof Cluster
        ? redis.duplicate(undefined, { redisOptions: { ...redis.options.redisOptions, ...durableNode } })
        : redis.duplicate(durableNode);
  durable?.on('error', () => {
    // Reported once by the main connection's listener; calls on this one reject and it reconnects.
  });
  if (durable !== null) keepConnecting(durable, () => closed, logger, endpoint);
  const durableWrites = durable === null ? null : { redis: durable, replicas: commandReplicas, waitMs };

  return {
    redis,
    clustered,
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
        return await within(pingAll(redis), healthTimeoutMs, false);
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
