import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LockoutStore } from '../types.js';
import { decimal, LuaScript, parseNumber, positiveMs, RedisDataError, type Guard } from './connection.js';
import type { RedisKeys } from './keys.js';

/** Same cap as the embedded store: counts saturate here, memory stays bounded under a flood. */
export const MAX_FAILURES_KEPT = 10_000;

/**
 * Extra lifetime of the keys beyond what the caller's times imply. Times come from the callers'
 * clocks (tests use a fake one); Redis only frees memory with these expiries, so they are generous
 * enough to cover clock differences between gateways. Correctness never depends on them.
 */
const EXPIRY_SLACK_MS = 60_000;

/**
 * KEYS: failures zset. ARGV: now, cutoff (now - window), unique member, cap, pexpire ms.
 * Adds this failure, drops those at or before the cutoff and beyond the cap (oldest first), and
 * returns the count (at least 1, like the embedded store).
 */
export const LOCKOUT_RECORD = new LuaScript(
  'lockout-record',
  `redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local n = redis.call('ZCARD', KEYS[1])
local cap = tonumber(ARGV[4])
if n > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1)
  n = cap
end
if n > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
if n < 1 then n = 1 end
return n`,
);

/** KEYS: lock key. ARGV: now → locked-until text, or nil (an elapsed lock is removed). */
export const LOCKOUT_LOCKED_UNTIL = new LuaScript(
  'lockout-locked-until',
  `local v = redis.call('GET', KEYS[1])
if not v then return false end
local t = tonumber(v)
if t == nil or t <= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return false
end
return v`,
);

export function createRedisLockoutStore(redis: Redis, keys: RedisKeys, guard: Guard, clock: () => number): LockoutStore {
  // Members must be unique (two failures in the same millisecond count twice) and deterministic
  // inside the script: this gateway's random tag plus a counter.
  const tag = randomBytes(6).toString('hex');
  let counter = 0;

  return {
    recordFailure(systemUser, now, windowMs) {
      return guard('lockouts.recordFailure', async () => {
        counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
        const count = await LOCKOUT_RECORD.run(
          redis,
          [keys.lockoutFailures(systemUser)],
          [decimal(now), decimal(now - windowMs), `${now}:${tag}:${counter}`, MAX_FAILURES_KEPT, positiveMs(windowMs + EXPIRY_SLACK_MS)],
        );
        if (typeof count !== 'number') throw new RedisDataError('lockout-record returned a non-integer.');
        return count;
      });
    },

    lock(systemUser, until) {
      return guard('lockouts.lock', async () => {
        // Only `until` is given: the expiry is measured against this gateway's clock, plus slack.
        await redis.set(keys.lockoutLock(systemUser), decimal(until), 'PX', positiveMs(Math.max(until - clock(), 0) + EXPIRY_SLACK_MS));
      });
    },

    lockedUntil(systemUser, now) {
      return guard('lockouts.lockedUntil', async () => {
        const key = keys.lockoutLock(systemUser);
        const reply = await LOCKOUT_LOCKED_UNTIL.run(redis, [key], [decimal(now)]);
        return reply === null ? null : parseNumber(typeof reply === 'string' ? reply : undefined, key);
      });
    },

    clear(systemUser) {
      return guard('lockouts.clear', async () => {
        await redis.del(keys.lockoutFailures(systemUser), keys.lockoutLock(systemUser));
      });
    },
  };
}
