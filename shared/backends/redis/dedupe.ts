import type { DedupeEntry, DedupeIndex } from '../scale-out-types.js';
import type { Deadline } from '../../util/deadline.js';
import { asArray, LuaScript, positiveMs, RedisDataError, type Guard, type RedisClient } from './connection.js';
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
  if (!/^\d+$/.test(text)) throw new RedisDataError(`Dedupe key ${key} holds ${text.length} characters that are not an id.`);
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

/** Entries of one provider (one hash slot), in the order given, with their positions in the call. */
interface ProviderClaims {
  systemUser: string;
  positions: number[];
}

function byProvider(entries: readonly { systemUser: string }[]): ProviderClaims[] {
  if (entries.length === 1) return [{ systemUser: entries[0]!.systemUser, positions: [0] }];
  const groups = new Map<string, ProviderClaims>();
  entries.forEach((e, i) => {
    const group = groups.get(e.systemUser);
    if (group === undefined) groups.set(e.systemUser, { systemUser: e.systemUser, positions: [i] });
    else group.positions.push(i);
  });
  return [...groups.values()];
}

/**
 * The provider's `dedupe:{key}` (its hash slot, keys.ts) → the first event id (decimal text), with
 * PX = the dedupe window, set by `SET key id NX PX window GET` (Redis ≥ 7.0): nil = the claim is
 * new, otherwise the earlier id. Per provider in a call: one event is a plain SET; more are one
 * script call per 1000 keys (a request's 100 events cost one command instead of 100: ioredis'
 * per-command work showed in a loaded gateway's CPU profile, npm run bench:profile). Everything a
 * call (and every concurrent call) sends goes out in one write per shard (auto-pipelining). Two
 * entries of one call with the same key: the second sees the first's id, as a resend would.
 *
 * Redis losing its last writes (a failover to a replica that missed them, an AOF restart) loses
 * claims: a resend inside the window after it gets a new id and is stored twice. That is the
 * dedupe window's loss, never an id issued twice: ids come from Kafka (ids/allocator.ts).
 */
export class RedisDedupeIndex implements DedupeIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly guard: Guard,
  ) {}

  claim(entries: readonly DedupeEntry[], windowMs: number, deadline?: Deadline): Promise<(bigint | null)[]> {
    if (entries.length === 0) return Promise.resolve([]);
    for (const { id } of entries) if (id <= 0n) return Promise.reject(new RangeError(`Dedupe ids are positive, got ${id}.`));
    return this.guard(
      'dedupe.claim',
      async () => {
        const px = String(positiveMs(windowMs));
        const replies = new Array<unknown>(entries.length);
        const calls: Promise<void>[] = [];
        for (const { systemUser, positions } of byProvider(entries)) {
          if (positions.length === 1) {
            const { key, id } = entries[positions[0]!]!;
            calls.push(this.redis.set(this.keys.dedupe(systemUser, key), id.toString(), 'PX', px, 'NX', 'GET').then((r) => void (replies[positions[0]!] = r)));
            continue;
          }
          for (let i = 0; i < positions.length; i += CLAIM_CHUNK) {
            const chunk = positions.slice(i, i + CLAIM_CHUNK);
            const keys = chunk.map((p) => this.keys.dedupe(systemUser, entries[p]!.key));
            const args = [...chunk.map((p) => entries[p]!.id.toString()), px];
            calls.push(
              DEDUPE_CLAIM.run(this.redis, keys, args).then((reply) => {
                const got = asArray(reply, 'dedupe claim');
                if (got.length !== chunk.length) throw new RedisDataError(`Dedupe claim answered ${got.length} of ${chunk.length} keys.`);
                chunk.forEach((p, k) => (replies[p] = got[k]));
              }),
            );
          }
        }
        await Promise.all(calls);
        return replies.map((reply, i) => {
          if (reply === null) return null;
          const { key, id } = entries[i]!;
          if (typeof reply !== 'string') throw new RedisDataError(`Dedupe key ${key}: unexpected reply.`);
          const existing = parseId(reply, key);
          // Ids are unique, so holding our own id means the claim is ours (a claim made again).
          return existing === id ? null : existing;
        });
      },
      deadline,
    );
  }

  /**
   * Deletes the claims whatever id they hold now. Between a failed store and this call another
   * gateway may have claimed the key for an event it did store (only after our claim expired, i.e. a
   * window later), so releaseClaims (compare-and-delete) is the safer call when the ids are known.
   */
  release(entries: readonly Omit<DedupeEntry, 'id'>[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return this.guard('dedupe.release', async () => {
      const calls: Promise<unknown>[] = [];
      for (const { systemUser, positions } of byProvider(entries)) {
        for (let i = 0; i < positions.length; i += RELEASE_CHUNK) {
          calls.push(this.redis.del(...positions.slice(i, i + RELEASE_CHUNK).map((p) => this.keys.dedupe(systemUser, entries[p]!.key))));
        }
      }
      await Promise.all(calls);
    });
  }

  /** Deletes each claim only while it still holds the id we claimed it with (one script per provider and 1000 keys). */
  releaseClaims(entries: readonly DedupeEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return this.guard('dedupe.release', async () => {
      const calls: Promise<unknown>[] = [];
      for (const { systemUser, positions } of byProvider(entries)) {
        for (let i = 0; i < positions.length; i += RELEASE_CHUNK) {
          const chunk = positions.slice(i, i + RELEASE_CHUNK).map((p) => entries[p]!);
          calls.push(
            DEDUPE_RELEASE_OWN.run(
              this.redis,
              chunk.map((e) => this.keys.dedupe(systemUser, e.key)),
              chunk.map((e) => e.id.toString()),
            ),
          );
        }
      }
      await Promise.all(calls);
    });
  }
}
