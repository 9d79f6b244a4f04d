/**
 * CPU per event of the scale-out id path alone, before and after ids moved from a Redis counter to Kafka id blocks: each event of a
 * 100-event append takes an id and claims its dedupe key, as KafkaEventLog.claimIds does.
 *
 * - "redis-epoch": the Redis counter with its epoch (INCRBY blocks of 1000, every claim checked
 *   against the epoch in the same script), loaded from OLD_ROOT, a checkout of the code before
 *   the change (e.g. `git worktree add --detach /tmp/before <commit>`).
 * - "kafka-blocks": blocks of 1000 named by offsets of the Kafka id-blocks topic (this checkout),
 *   and the plain dedupe claim.
 *
 * Rounds alternate; reported per event: this process's CPU, Redis's (INFO cpu) and the Kafka
 * broker's (/proc of the pid in SERVICES_DIR), as medians of the rounds.
 *
 * Run: OLD_ROOT=/tmp/before npx tsx bench/id-allocator.ts   (env EVENTS=200000, ROUNDS=3; the
 *      services from .services.env)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { KafkaIdAllocator } from '../shared/backends/ids/allocator.js';
import { IdBlocksTopic } from '../shared/backends/ids/blocks-topic.js';
import { openRedisStores } from '../shared/backends/redis/index.js';
import { servicesEnv } from './lib/services-env.js';

const EVENTS = Number(process.env.EVENTS ?? 200_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PER_APPEND = 100;
const OLD_ROOT = process.env.OLD_ROOT;
if (OLD_ROOT === undefined) throw new Error('OLD_ROOT=<checkout before the change> is required');
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

const services = servicesEnv();
const brokers = (services.KAFKA_BROKERS ?? '').split(',');
const redisUrl = services.REDIS_URL ?? '';
const kafkaPid = Number(readFileSync(path.join(services.SERVICES_DIR ?? '.services', 'kafka.pid'), 'utf8').trim());
const ticks = 100; // USER_HZ

function kafkaCpuMs(): number {
  const fields = readFileSync(`/proc/${kafkaPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
}
async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const read = (name: string) => Number(new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? 0);
  return (read('used_cpu_user') + read('used_cpu_sys')) * 1000;
}

interface IdPath {
  append(keys: string[]): Promise<void>;
  close(): Promise<void>;
}

/** The code before the change, from OLD_ROOT: Redis counter + epoch, and the epoch-checked claim. */
async function redisEpochPath(prefix: string): Promise<IdPath> {
  interface OldStores {
    ids: { allocate(n: number): Promise<bigint[]>; epochOf(ids: readonly bigint[]): string | undefined };
    dedupe: { claim(e: { key: string; id: bigint }[], w: number, epoch?: string): Promise<unknown> };
    close(): Promise<void>;
  }
  const redisModule = (await import(path.join(OLD_ROOT!, 'shared/backends/redis/index.ts'))) as { openRedisStores(o: object): Promise<OldStores> };
  const recoveryModule = (await import(path.join(OLD_ROOT!, 'shared', 'backends', 'redis', 'id-recovery.ts') /* of the old build: gone from this one */)) as {
    IdRecovery: new (o: object) => { start(): Promise<void> };
  };
  const stores = await redisModule.openRedisStores({ url: redisUrl, keyPrefix: prefix, logger: { warn: () => {} } });
  await new recoveryModule.IdRecovery({ ids: stores.ids, highestStoredId: async () => 0n, idFloor: 0n, margin: 0n, settleMs: 0, logger: quiet }).start();
  return {
    async append(keys) {
      const ids = await stores.ids.allocate(keys.length);
      await stores.dedupe.claim(
        keys.map((key, i) => ({ key, id: ids[i]! })),
        600_000,
        stores.ids.epochOf(ids),
      );
    },
    close: () => stores.close(),
  };
}

/** This checkout: Kafka id blocks, plain claim. */
async function kafkaBlocksPath(prefix: string): Promise<IdPath> {
  const stores = await openRedisStores({ url: redisUrl, keyPrefix: prefix, logger: { warn: () => {} } });
  const blocks = await IdBlocksTopic.open({ brokers, topic: `${prefix.replace(/:$/, '')}.id-blocks`, clientId: 'bench-ids', timeoutMs: 5000, logger: quiet });
  const ids = new KafkaIdAllocator({ blocks, floor: 0n, verify: async (_p, floor) => floor, logger: quiet });
  await ids.start();
  return {
    async append(keys) {
      const got = await ids.allocate(keys.length);
      await stores.dedupe.claim(
        keys.map((key, i) => ({ systemUser: 'bench', key, id: got[i]! })),
        600_000,
      );
    },
    async close() {
      ids.close();
      await blocks.close();
      await stores.close();
    },
  };
}

async function measure(name: string, open: (prefix: string) => Promise<IdPath>, round: number, redis: Redis) {
  const prefix = `bench-ids-${name}-${Date.now().toString(36)}-${round}:`;
  const p = await open(prefix);
  // Warm up (scripts loaded, first block taken, JIT).
  for (let i = 0; i < 20; i++) await p.append(Array.from({ length: PER_APPEND }, (_, k) => `w${i}-${k}`));
  const cpu0 = process.cpuUsage();
  const redis0 = await redisCpuMs(redis);
  const kafka0 = kafkaCpuMs();
  const t0 = performance.now();
  // 8 appends in flight, as concurrent requests would have.
  let next = 0;
  const worker = async () => {
    while (next < EVENTS) {
      const base = next;
      next += PER_APPEND;
      await p.append(Array.from({ length: PER_APPEND }, (_, k) => `e${base + k}`));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const result = {
    processUs: (cpu.user + cpu.system) / EVENTS,
    redisUs: ((await redisCpuMs(redis)) - redis0) * 1000 / EVENTS,
    kafkaUs: (kafkaCpuMs() - kafka0) * 1000 / EVENTS,
    eventsPerS: EVENTS / (wallMs / 1000),
  };
  await p.close();
  const keys = await redis.keys(`${prefix}*`);
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  return result;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const redis = new Redis(redisUrl);
  const results: Record<string, { processUs: number; redisUs: number; kafkaUs: number; eventsPerS: number }[]> = { 'redis-epoch': [], 'kafka-blocks': [] };
  for (let round = 0; round < ROUNDS; round++) {
    results['redis-epoch']!.push(await measure('redis-epoch', redisEpochPath, round, redis));
    results['kafka-blocks']!.push(await measure('kafka-blocks', kafkaBlocksPath, round, redis));
  }
  console.log(`| id path | process CPU µs/event | Redis CPU µs/event | Kafka broker CPU µs/event | events/s (id path alone) |`);
  console.log(`|---|---:|---:|---:|---:|`);
  for (const [name, rs] of Object.entries(results)) {
    const f = (k: 'processUs' | 'redisUs' | 'kafkaUs') => `${median(rs.map((r) => r[k])).toFixed(2)} (${rs.map((r) => r[k].toFixed(2)).join(', ')})`;
    console.log(`| ${name} | ${f('processUs')} | ${f('redisUs')} | ${f('kafkaUs')} | ${Math.round(median(rs.map((r) => r.eventsPerS)))} |`);
  }
  redis.disconnect();
}

await main();
