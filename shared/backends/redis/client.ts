import { readFileSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import type { Config } from '../../config/index.js';
import { redisClientOptions, redisClusterOptions, redisSentinelOptions, type RedisConnectionOptions } from './client-options.js';
import { describeEndpoint, type RedisClient, type RedisLogger } from './connection.js';

/**
 * The Redis client of the scale-out mode: how it is made in the form configured (its options, per
 * form: client-options.ts), kept connecting, asked whether it answers, and how a configuration
 * becomes its options. The stores on top of it: index.ts.
 */

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

