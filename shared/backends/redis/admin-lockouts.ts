import type { AdminLockoutStore, GuessPolicy } from '../operators.js';
import { decimal, LuaScript, parseNumber, positiveMs, RedisDataError, type Guard, type RedisClient } from './connection.js';
import type { OperatorKeys } from './keys.js';

/** Keys outlive what they record by this much (gateways' clocks differ); correctness never depends on it. */
const EXPIRY_SLACK_MS = 60_000;

/**
 * One hash per address that presented a wrong token: `ws`, `c` the window's start and count, `L`
 * the lock's end. It expires with its window or lock, so memory is bounded by the addresses that
 * guessed in the last window. Shared by every gateway: guessing on several does not multiply the
 * attempts. KEYS: the hash. ARGV: now, maxFailures, windowMs, lockMs, slack → the lock's end or false.
 */
const ADMIN_GUESS_RECORD = new LuaScript(
  'admin-guess-record',
  `local now, maxF, win, lockMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local function fmt(n) return string.format('%.0f', n) end
local h = redis.call('HMGET', KEYS[1], 'ws', 'c', 'L')
local L = tonumber(h[3])
if L and L > now then return fmt(L) end
local ws, c = tonumber(h[1]), tonumber(h[2])
if not ws or now - ws >= win then ws, c = now, 0 end
c = c + 1
L = nil
if c >= maxF then L, c, ws = now + lockMs, 0, now end
redis.call('HSET', KEYS[1], 'ws', fmt(ws), 'c', fmt(c))
if L then redis.call('HSET', KEYS[1], 'L', fmt(L)) else redis.call('HDEL', KEYS[1], 'L') end
redis.call('PEXPIRE', KEYS[1], fmt(math.max(ws + win, L or 0) - now + tonumber(ARGV[5])))
if L then return fmt(L) end
return false`,
);

export class RedisAdminLockoutStore implements AdminLockoutStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: OperatorKeys,
    private readonly guard: Guard,
  ) {}

  lockedUntil(address: string, now: number): Promise<number | null> {
    return this.guard('adminLockouts.lockedUntil', async () => {
      const raw = await this.redis.hget(this.keys.guess(address), 'L');
      if (raw === null) return null;
      const until = parseNumber(raw, this.keys.guess(address));
      return until > now ? until : null;
    });
  }

  recordFailure(address: string, now: number, policy: GuessPolicy): Promise<number | null> {
    return this.guard('adminLockouts.recordFailure', async () => {
      const reply = await ADMIN_GUESS_RECORD.run(
        this.redis,
        [this.keys.guess(address)],
        [decimal(now), decimal(policy.maxFailures), decimal(policy.windowMs), decimal(policy.lockMs), positiveMs(EXPIRY_SLACK_MS)],
      );
      if (reply === null) return null;
      if (typeof reply !== 'string') throw new RedisDataError(`admin-guess-record returned ${JSON.stringify(reply)}.`);
      return parseNumber(reply, 'admin-guess-record');
    });
  }
}
