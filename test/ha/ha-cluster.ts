/**
 * The HA profile's engines (SERVICES_PROFILE=ha: Redis primary + replica + three Sentinels, three
 * Kafka brokers) and what the failure tests run on them: gateways and a worker as real processes
 * (so that they can be kill -9'd); the load and the tally are helpers/failover-load.ts's.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { openRedisStores, type RedisStores } from '../../shared/backends/redis/index.js';
import { hashPassword } from '../../shared/domain/passwords.js';
import { report as reportAs, startLoad, tally as tallyIn, type Answer, type Tally } from '../helpers/failover-load.js';
import { startProc, type Proc } from '../helpers/processes.js';
import { profileEnv, profileNodes, upProfile } from '../helpers/profile.js';
import { uniqueName } from '../helpers/services.js';
import { sleep, waitFor } from '../helpers/wait.js';

export { sleep, startLoad, startProc, waitFor, type Proc };

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface HaServices {
  sentinels: { host: string; port: number }[];
  sentinelName: string;
  redisNodes: { host: string; port: number }[];
  kafkaBrokers: string[];
  clickhouseUrl: string;
  servicesDir: string;
}

const hostPort = (a: string) => {
  const [host, port] = a.split(':');
  return { host: host!, port: Number(port) };
};

/** Settings `SERVICES_PROFILE=ha npm run services:up` wrote; a missing file fails the suite. */
export function haServices(): HaServices {
  const env = profileEnv('ha', ['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'REDIS_HA_NODES', 'KAFKA_BROKERS', 'CLICKHOUSE_URL', 'SERVICES_DIR'], process.env.SERVICES_HA_ENV_FILE);
  return {
    sentinels: env.REDIS_SENTINELS.split(',').map(hostPort),
    sentinelName: env.REDIS_SENTINEL_NAME,
    redisNodes: env.REDIS_HA_NODES.split(',').map(hostPort),
    kafkaBrokers: env.KAFKA_BROKERS.split(','),
    clickhouseUrl: env.CLICKHOUSE_URL,
    servicesDir: env.SERVICES_DIR,
  };
}

export const ha = haServices();

// ---- the engines' nodes ------------------------------------------------------------------------

/** Signals to a node of the HA profile (redis-1, sentinel-2, kafka-3 ...), from up.sh's pid files. */
export const { nodePid, killNode, stallNode, resumeNode } = profileNodes(ha.servicesDir);

/** Starts a node again (or leaves it if it runs) through the services script. */
export function upNode(node: string): void {
  upProfile('ha', [node], { quiet: true });
}

/** Asks the Sentinels (the first that answers) which node is the primary. */
export async function redisPrimary(): Promise<{ host: string; port: number; node: string }> {
  for (const s of ha.sentinels) {
    const sentinel = new Redis({ ...s, lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
    try {
      await sentinel.connect();
      const reply = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', ha.sentinelName)) as [string, string];
      const port = Number(reply[1]);
      return { host: reply[0], port, node: `redis-${ha.redisNodes.findIndex((n) => n.port === port) + 1}` };
    } catch {
      // the next Sentinel
    } finally {
      sentinel.disconnect();
    }
  }
  throw new Error('no Sentinel answered');
}

/** A plain client of one Redis node (not through the Sentinels). */
export function nodeClient(port: number): Redis {
  return new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, connectTimeout: 1000, lazyConnect: false });
}

/** Both Redis nodes up, one primary with its replica in sync: the state every test starts from. */
export async function redisSettled(): Promise<void> {
  for (const n of [1, 2]) upNode(`redis-${n}`);
  await waitFor(
    'a primary with a replica in sync',
    async () => {
      const p = await redisPrimary();
      const c = nodeClient(p.port);
      try {
        const info = await c.info('replication');
        return /role:master/.test(info) && /connected_slaves:1/.test(info) && /slave0:.*state=online/.test(info);
      } finally {
        c.disconnect();
      }
    },
    60_000,
  );
}

// ---- gateways and the worker as processes ------------------------------------------------------

/** The environment every process of one test shares: the HA engines, isolated names. */
export function clusterEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: '',
    REDIS_SENTINELS: ha.sentinels.map((s) => `${s.host}:${s.port}`).join(','),
    REDIS_SENTINEL_NAME: ha.sentinelName,
    REDIS_KEY_PREFIX: `${uniqueName('ha')}:`,
    KAFKA_BROKERS: ha.kafkaBrokers.join(','),
    KAFKA_TOPIC: uniqueName('events'),
    KAFKA_GROUP_ID: uniqueName('worker'),
    CLICKHOUSE_URL: ha.clickhouseUrl,
    CLICKHOUSE_DATABASE: uniqueName('gw'),
    WORKER_BATCH_MS: '200',
    APPEND_TIMEOUT_MS: '3000',
    GATEWAY_THREADS: '1',
    ADMIN_TOKEN: 'ha-token',
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Redis stores of the test itself (through the Sentinels): providers, commands, checks. */
export async function testStores(env: Record<string, string>): Promise<RedisStores> {
  return openRedisStores({
    sentinels: ha.sentinels,
    sentinelName: ha.sentinelName,
    keyPrefix: env.REDIS_KEY_PREFIX!,
    logger: { warn: () => undefined },
  });
}

export async function createProvider(stores: RedisStores): Promise<void> {
  const now = Date.now();
  const hash = await hashPassword('secret-1');
  await stores.providers.create({ systemUser: 'acme', passwordHash: hash, enabled: true, timeZone: null, requireRegisteredVehicles: false, createdAt: now, updatedAt: now });
}

/** Two gateways and a worker, each a process, on one provider 'acme' (password secret-1). */
export interface Run {
  env: Record<string, string>;
  stores: RedisStores;
  gateways: Proc[];
  worker: Proc;
}

export async function startRun(): Promise<Run> {
  await redisSettled();
  const env = clusterEnv();
  const stores = await testStores(env);
  await createProvider(stores);
  const gateways = [await startProc('gateway', env), await startProc('gateway', env)];
  const worker = await startProc('worker', env);
  return { env, stores, gateways, worker };
}

export async function stopRun(run: Run | undefined): Promise<void> {
  if (run === undefined) return;
  for (const p of [...run.gateways, run.worker]) await p.stop();
  await run.stores.close();
}

export function report(name: string, figures: object): void {
  reportAs('ha', name, figures);
}

/** What `tally` of helpers/failover-load.ts finds in this run's ClickHouse database. */
export function tally(answers: readonly Answer[], env: Record<string, string>, ms?: number): Promise<Tally> {
  return tallyIn(answers, { url: ha.clickhouseUrl, database: env.CLICKHOUSE_DATABASE! }, ms);
}
