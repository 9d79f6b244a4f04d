/**
 * The cluster profile's Redis Cluster (SERVICES_PROFILE=cluster: 3 primaries, 3 replicas, nodes
 * cluster-1 .. cluster-6) and what the cluster tests do to it: find which node serves a slot, kill
 * or freeze a primary, start a node again, move a slot under load, and wait until the cluster is
 * whole again (every slot served, each primary with a linked replica).
 */
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { openRedisStores, type RedisStores } from '../../shared/backends/redis/index.js';
import { profileEnv, profileNodes, upProfile } from '../helpers/profile.js';
import { uniqueName } from '../helpers/services.js';
import { sleep, waitFor } from '../helpers/wait.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface ClusterServices {
  /** cluster-1 first: node N is nodes[N-1]. */
  nodes: { host: string; port: number }[];
  kafkaBrokers: string[];
  clickhouseUrl: string;
  servicesDir: string;
}

/** Settings `SERVICES_PROFILE=cluster npm run services:up` wrote; a missing file fails the suite. */
function clusterServices(): ClusterServices {
  const env = profileEnv('cluster', ['REDIS_CLUSTER_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL', 'SERVICES_DIR'], process.env.SERVICES_CLUSTER_ENV_FILE);
  return {
    nodes: env.REDIS_CLUSTER_NODES.split(',').map((a) => ({ host: a.split(':')[0]!, port: Number(a.split(':')[1]) })),
    kafkaBrokers: env.KAFKA_BROKERS.split(','),
    clickhouseUrl: env.CLICKHOUSE_URL,
    servicesDir: env.SERVICES_DIR,
  };
}

export const cluster = clusterServices();

export const nodeName = (port: number): string => `cluster-${cluster.nodes.findIndex((n) => n.port === port) + 1}`;

export const { nodePid, killNode, stallNode, resumeNode } = profileNodes(cluster.servicesDir);

/** Starts nodes again (or leaves those running) through the services script, which waits until the cluster is whole. */
export function upNodes(...nodes: string[]): void {
  upProfile('cluster', nodes, { quiet: true });
}

/** A plain client of one node (not the cluster client): its own view of the cluster. */
export function nodeClient(port: number): Redis {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, connectTimeout: 1000, lazyConnect: false });
  c.on('error', () => undefined);
  return c;
}

async function ask<T>(port: number, call: (c: Redis) => Promise<T>): Promise<T> {
  const c = nodeClient(port);
  try {
    return await call(c);
  } finally {
    c.disconnect();
  }
}

export interface NodeInfo {
  id: string;
  port: number;
  primary: boolean;
  failing: boolean;
  slots: [number, number][];
}

/** CLUSTER NODES as a node that answers sees it. */
export async function clusterNodes(): Promise<NodeInfo[]> {
  for (const n of cluster.nodes) {
    try {
      const text = await ask(n.port, (c) => c.call('CLUSTER', 'NODES') as Promise<string>);
      return text
        .trim()
        .split('\n')
        .map((line) => {
          const f = line.split(' ');
          const slots = f.slice(8).filter((s) => /^\d/.test(s)).map((s) => {
            const [a, b] = s.split('-').map(Number);
            return [a!, b ?? a!] as [number, number];
          });
          return { id: f[0]!, port: Number(f[1]!.split(':')[1]!.split('@')[0]), primary: f[2]!.includes('master'), failing: f[2]!.includes('fail'), slots };
        });
    } catch {
      // the next node
    }
  }
  throw new Error('no cluster node answered CLUSTER NODES');
}

/** The node serving a slot now (as the cluster sees it), and its name. */
export async function primaryOf(slot: number): Promise<{ port: number; id: string; node: string }> {
  const owner = (await clusterNodes()).find((n) => n.primary && !n.failing && n.slots.some(([a, b]) => slot >= a && slot <= b));
  if (owner === undefined) throw new Error(`no primary serves slot ${slot}`);
  return { port: owner.port, id: owner.id, node: nodeName(owner.port) };
}

/** Every node up, the cluster whole: the state every test starts from and ends in. */
export function clusterSettled(): void {
  upNodes();
}

/**
 * Moves `slot` from the primary serving it to `to` as `redis-cli --cluster reshard` does, key by
 * key with MIGRATE, `batch` keys at a time with a pause between batches, so that the move lasts
 * while the gateways write: they meet ASK and TRYAGAIN replies, then MOVED once it is done.
 */
export async function migrateSlot(slot: number, to: { port: number; id: string }, batch = 5, pauseMs = 50): Promise<{ keys: number; ms: number }> {
  const from = await primaryOf(slot);
  if (from.port === to.port) throw new Error(`slot ${slot} is on ${to.port} already`);
  const started = Date.now();
  const source = nodeClient(from.port);
  const target = nodeClient(to.port);
  let moved = 0;
  try {
    await target.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', from.id);
    await source.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', to.id);
    for (;;) {
      const keys = (await source.call('CLUSTER', 'GETKEYSINSLOT', String(slot), String(batch))) as string[];
      if (keys.length === 0) break;
      await source.call('MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'REPLACE', 'KEYS', ...keys);
      moved += keys.length;
      await sleep(pauseMs);
    }
    // The new owner first, then the old one and the other primaries (the order redis-cli uses).
    await target.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id);
    await source.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id);
    for (const n of await clusterNodes()) {
      if (!n.primary || n.port === from.port || n.port === to.port || n.failing) continue;
      await ask(n.port, (c) => c.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id));
    }
  } finally {
    source.disconnect();
    target.disconnect();
  }
  await waitFor(`slot ${slot} served by ${to.port}`, async () => ((await primaryOf(slot)).port === to.port ? true : undefined), 30_000);
  return { keys: moved, ms: Date.now() - started };
}

/** The environment every process of one test shares: the cluster, isolated names. */
export function clusterEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: '',
    REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','),
    REDIS_KEY_PREFIX: `${uniqueName('cl')}:`,
    KAFKA_BROKERS: cluster.kafkaBrokers.join(','),
    KAFKA_TOPIC: uniqueName('events'),
    KAFKA_GROUP_ID: uniqueName('worker'),
    CLICKHOUSE_URL: cluster.clickhouseUrl,
    CLICKHOUSE_DATABASE: uniqueName('gw'),
    WORKER_BATCH_MS: '200',
    APPEND_TIMEOUT_MS: '3000',
    GATEWAY_THREADS: '1',
    ADMIN_TOKEN: 'cluster-token',
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Redis stores of the test itself, on the cluster. */
export function clusterStores(keyPrefix: string): Promise<RedisStores> {
  return openRedisStores({ clusterNodes: cluster.nodes, keyPrefix, logger: { warn: () => undefined } });
}

/** A cluster client for inspecting keys (CLUSTER KEYSLOT, the nodes' own answers). */
export function adminClient(): Cluster {
  const c = new Cluster(cluster.nodes, { redisOptions: { connectTimeout: 1000 } });
  c.on('error', () => undefined);
  return c;
}

/** Deletes every key under `prefix` on every primary (SCAN per node: tests only, never the product). */
export async function deleteByPrefix(prefix: string): Promise<void> {
  for (const n of await clusterNodes()) {
    if (!n.primary || n.failing) continue;
    await ask(n.port, async (c) => {
      let cursor = '0';
      do {
        const [next, keys] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        // Keys of one scan batch may be in many slots: one DEL each.
        await Promise.all(keys.map((k) => c.del(k)));
      } while (cursor !== '0');
    });
  }
}
