import type { Redis } from 'ioredis';
import type { DedupeIndex } from '../types.js';
import { asArray, LuaScript, pipelineReplies, positiveMs, RedisDataError, type Guard } from './connection.js';
import type { RedisKeys } from './keys.js';

/** Keys per DEL / per script call in release. */
const RELEASE_CHUNK = 1000;
/** Keys per claim script call: keeps each script (which blocks Redis) short. */
const CLAIM_CHUNK = 1000;

/** KEYS: dedupe keys. ARGV: the id each must still hold → number of keys deleted. */
export const DEDUPE_RELEASE_OWN = new LuaScript(
  'dedupe-release-own',
  `local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i] then n = n + redis.call('DEL', KEYS[i]) end
end
return n`,
);

function parseId(text: string, key: string): bigint {
  if (!/^\d+$/.test(text)) throw new RedisDataError(`Dedupe key ${key} holds ${JSON.stringify(text)}, not an id.`);
  return BigInt(text);
}

/** KEYS: dedupe keys. ARGV: the id to claim each with, then the window (ms) → per key: nil or the holder's id. */
export const DEDUPE_CLAIM = new LuaScript(
  'dedupe-claim',
  `local px = ARGV[#ARGV]
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('SET', KEYS[i], ARGV[i], 'NX', 'PX', px, 'GET')
end
return out`,
);

/**
 * `{prefix}dedupe:{key}` → the first event id (decimal text), with PX = the dedupe window, set by
 * `SET key id NX PX window GET` (Redis ≥ 7.0): nil = the claim is new, otherwise the earlier id.
 * One script call per 1000 keys, written back to back (one round trip) per claim() call: a
 * request's 100 events cost one command instead of 100 (ioredis' per-command work showed in a
 * loaded gateway's CPU profile, npm run bench:profile). Two entries of one call with the same
 * key: the second sees the first's id, as a resend would.
 *
 * Redis losing its last writes (a failover to a replica that missed them, an AOF restart) loses
 * claims: a resend inside the window after it gets a new id and is stored twice. That is the
 * dedupe window's loss, never an id issued twice: ids come from Kafka (ids/allocator.ts).
 */
export class RedisDedupeIndex implements DedupeIndex {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly guard: Guard,
  ) {}

  claim(entries: readonly { key: string; id: bigint }[], windowMs: number): Promise<(bigint | null)[]> {
    if (entries.length === 0) return Promise.resolve([]);
    return this.guard('dedupe.claim', async () => {
      const px = String(positiveMs(windowMs));
      for (const { id } of entries) if (id <= 0n) throw new RangeError(`Dedupe ids are positive, got ${id}.`);
      const chunks: Promise<unknown>[] = [];
      for (let i = 0; i < entries.length; i += CLAIM_CHUNK) {
        const chunk = entries.slice(i, i + CLAIM_CHUNK);
        const keys = chunk.map(({ key }) => this.keys.dedupe(key));
        const args = [...chunk.map(({ id }) => id.toString()), px];
        chunks.push(DEDUPE_CLAIM.run(this.redis, keys, args));
      }
      const replies = (await Promise.all(chunks)).flatMap((reply) => asArray(reply, 'dedupe claim'));
      if (replies.length !== entries.length) throw new RedisDataError(`Dedupe claim answered ${replies.length} of ${entries.length} keys.`);
      return replies.map((reply, i) => {
        if (reply === null) return null;
        const { key, id } = entries[i]!;
        if (typeof reply !== 'string') throw new RedisDataError(`Dedupe key ${key}: unexpected reply.`);
        const existing = parseId(reply, key);
        // Ids are unique, so holding our own id means the claim is ours (a claim made again).
        return existing === id ? null : existing;
      });
    });
  }

  /**
   * Deletes the claims whatever id they hold now. Between a failed store and this call another
   * gateway may have claimed the key for an event it did store (only after our claim expired, i.e. a
   * window later), so releaseClaims (compare-and-delete) is the safer call when the ids are known.
   */
  release(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    return this.guard('dedupe.release', async () => {
      const pipeline = this.redis.pipeline();
      for (let i = 0; i < keys.length; i += RELEASE_CHUNK) {
        pipeline.del(...keys.slice(i, i + RELEASE_CHUNK).map((k) => this.keys.dedupe(k)));
      }
      pipelineReplies(await pipeline.exec());
    });
  }

  /** Deletes each claim only while it still holds the id we claimed it with (one script per 1000). */
  releaseClaims(entries: readonly { key: string; id: bigint }[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return this.guard('dedupe.release', async () => {
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < entries.length; i += RELEASE_CHUNK) {
        const chunk = entries.slice(i, i + RELEASE_CHUNK);
        calls.push(
          DEDUPE_RELEASE_OWN.run(
            this.redis,
            chunk.map((e) => this.keys.dedupe(e.key)),
            chunk.map((e) => e.id.toString()),
          ),
        );
      }
      await Promise.all(calls);
    });
  }
}
