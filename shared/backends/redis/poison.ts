import type { PoisonMessage } from '../types.js';
import { decimal, LuaScript, RedisDataError, type Guard, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/**
 * Messages the worker could not load, set aside in Redis (the worker already writes last-report
 * times there). Not a dead-letter topic: operators list, re-drive and discard single messages, and
 * a Kafka topic can neither delete one message nor be listed without a consumer group joining first.
 *
 *   {g:poison}:messages   hash id → JSON {topic, partition, offset, key, reason, at, value (base64), truncated}
 *   {g:poison}:index      sorted set id, score = when it was set aside
 *
 * Bounded: at most MAX_MESSAGES (the oldest go first), each value kept up to MAX_VALUE_BYTES.
 */
const MAX_MESSAGES = 10_000;
const MAX_VALUE_BYTES = 256 * 1024;

/** KEYS: hash, index. ARGV: cap, then id, at, JSON per message → how many were dropped to stay under the cap. */
export const POISON_ADD = new LuaScript(
  'poison-add',
  `for i = 2, #ARGV, 3 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
  redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i])
end
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[1])
if over <= 0 then return 0 end
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do redis.call('HDEL', KEYS[1], id) end
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
return over`,
);

/** KEYS: hash, index. ARGV: id → 1 removed, 0 none. */
export const POISON_REMOVE = new LuaScript(
  'poison-remove',
  `redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])`,
);

interface StoredPoison {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  reason: string;
  at: number;
  value: string;
  truncated: boolean;
}

function encode(m: PoisonMessage): string {
  const truncated = m.truncated || m.value.length > MAX_VALUE_BYTES;
  const value = (m.value.length > MAX_VALUE_BYTES ? m.value.subarray(0, MAX_VALUE_BYTES) : m.value).toString('base64');
  const stored: StoredPoison = { topic: m.topic, partition: m.partition, offset: m.offset, key: m.key, reason: m.reason, at: m.at, value, truncated };
  return JSON.stringify(stored);
}

function decode(id: string, json: string): PoisonMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new RedisDataError(`Poison message ${id} is not JSON.`);
  }
  const p = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Partial<StoredPoison>;
  if (
    typeof p.topic !== 'string' ||
    typeof p.partition !== 'number' ||
    typeof p.offset !== 'string' ||
    typeof p.reason !== 'string' ||
    typeof p.at !== 'number' ||
    typeof p.value !== 'string' ||
    (p.key !== null && typeof p.key !== 'string')
  ) {
    throw new RedisDataError(`Poison message ${id} is malformed.`);
  }
  return { id, topic: p.topic, partition: p.partition, offset: p.offset, key: p.key ?? null, reason: p.reason, at: p.at, value: Buffer.from(p.value, 'base64'), truncated: p.truncated === true };
}

/** The id of a message: where it was on its topic. */
export function poisonId(partition: number, offset: string): string {
  return `${partition}-${offset}`;
}

export class RedisPoisonStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly guard: Guard,
  ) {}

  list(limit: number): Promise<PoisonMessage[]> {
    return this.guard('poison.list', async () => {
      if (!(limit >= 1)) return [];
      const ids = await this.redis.zrevrange(this.keys.poisonIndex(), 0, limit - 1);
      if (ids.length === 0) return [];
      const values = await this.redis.hmget(this.keys.poison(), ...ids);
      const out: PoisonMessage[] = [];
      ids.forEach((id, i) => {
        const json = values[i];
        if (typeof json === 'string') out.push(decode(id, json));
      });
      return out;
    });
  }

  count(): Promise<number> {
    return this.guard('poison.count', () => this.redis.zcard(this.keys.poisonIndex()));
  }

  get(id: string): Promise<PoisonMessage | null> {
    return this.guard('poison.get', async () => {
      const json = await this.redis.hget(this.keys.poison(), id);
      return json === null ? null : decode(id, json);
    });
  }

  add(messages: readonly PoisonMessage[]): Promise<void> {
    return this.guard('poison.add', async () => {
      if (messages.length === 0) return;
      const args = messages.flatMap((m) => [m.id, decimal(m.at), encode(m)]);
      await POISON_ADD.run(this.redis, [this.keys.poison(), this.keys.poisonIndex()], [decimal(MAX_MESSAGES), ...args]);
    });
  }

  remove(id: string): Promise<boolean> {
    return this.guard('poison.remove', async () => (await POISON_REMOVE.run(this.redis, [this.keys.poison(), this.keys.poisonIndex()], [id])) === 1);
  }
}
