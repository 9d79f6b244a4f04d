import type { Lockout, LockoutStore } from '../types.js';
import { asArray, decimal, LuaScript, parseNumber, positiveMs, RedisDataError, type Guard, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/**
 * Extra lifetime of the keys beyond what the caller's times imply. Times come from the callers'
 * clocks (tests use a fake one); Redis only frees memory with these expiries, so they are generous
 * enough to cover clock differences between gateways. Correctness never depends on them.
 */
const EXPIRY_SLACK_MS = 60_000;

/**
 * One hash per SystemUser holds everything the policy needs, so one script applies it atomically:
 *   `ws`, `wc`: start and count of the SystemUser-wide window; `L`: its lock end;
 *   `f:{address}`: that address's failure times inside the window (comma-separated, at most the
 *   threshold); `l:{address}`: that address's lock end.
 * The index sorted set (member SystemUser, score = latest lock end) lets operators list locks; it is
 * in a slot of its own (keys.ts), so a lock the script sets is added to it by a second call (a lock
 * missing from it still applies; only the operators' list would not show it).
 * Times are formatted with %.0f: Lua's tostring would print epoch ms as 1.7e+12.
 *
 * KEYS: user hash. ARGV: now, address, maxFailures, userMaxFailures, windowMs, lockMs, slackMs.
 * Returns the lock now in force for that address as `user:{end}` (SystemUser-wide) or `address:{end}`,
 * the ones past the early return followed by `:{latest lock end}`, which the operators' index gets
 * (as it did when the script wrote it), or false.
 */
export const LOCKOUT_RECORD = new LuaScript(
  'lockout-record',
  `local h, now, addr = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local maxF, userMax, win, lockMs = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local function fmt(n) return string.format('%.0f', n) end
local u = redis.call('HMGET', h, 'ws', 'wc', 'L', 'l:' .. addr, 'f:' .. addr)
-- While the SystemUser is locked everywhere nothing more is recorded: memory stays bounded.
if tonumber(u[3]) and tonumber(u[3]) > now then return 'user:' .. fmt(tonumber(u[3])) end
local ws, wc = tonumber(u[1]), tonumber(u[2])
if not ws or now - ws >= win then ws, wc = now, 0 end
wc = wc + 1
local L, l = tonumber(u[3]), tonumber(u[4])
if wc >= userMax then L, wc = now + lockMs, 0 end
local times = {}
if u[5] then for t in string.gmatch(u[5], '[^,]+') do if tonumber(t) > now - win then times[#times + 1] = t end end end
times[#times + 1] = fmt(now)
while #times > maxF do table.remove(times, 1) end
if #times >= maxF then l, times = now + lockMs, {} end
redis.call('HSET', h, 'ws', fmt(ws), 'wc', fmt(wc))
if L then redis.call('HSET', h, 'L', fmt(L)) end
if l then redis.call('HSET', h, 'l:' .. addr, fmt(l)) end
if #times > 0 then redis.call('HSET', h, 'f:' .. addr, table.concat(times, ',')) else redis.call('HDEL', h, 'f:' .. addr) end
-- Addresses that stopped failing leave fields behind; drop them once the hash grows past the ceiling.
if redis.call('HLEN', h) > 2 * userMax + 8 then
  local all = redis.call('HGETALL', h)
  for i = 1, #all, 2 do
    local k, v = all[i], all[i + 1]
    local p = string.sub(k, 1, 2)
    if p == 'l:' and tonumber(v) <= now then redis.call('HDEL', h, k) end
    if p == 'f:' then
      local last = tonumber(string.match(v, '([^,]+)$'))
      if last <= now - win then redis.call('HDEL', h, k) end
    end
  end
end
local lockEnd = math.max(L or 0, l or 0)
local keep = math.max(win, lockEnd - now) + tonumber(ARGV[7])
if redis.call('PTTL', h) < keep then redis.call('PEXPIRE', h, fmt(keep)) end
if lockEnd <= now then return false end
if L and L > now then return 'user:' .. fmt(L) .. ':' .. fmt(lockEnd) end
return 'address:' .. fmt(l) .. ':' .. fmt(lockEnd)`,
);

export function createRedisLockoutStore(redis: RedisClient, keys: RedisKeys, guard: Guard): LockoutStore {
  const readUntil = (reply: unknown, now: number, what: string): number | null => {
    let until: number | null = null;
    for (const v of asArray(reply, what)) {
      if (v === null) continue;
      const t = parseNumber(typeof v === 'string' ? v : undefined, what);
      if (t > now && (until === null || t > until)) until = t;
    }
    return until;
  };

  return {
    lockedUntil(systemUser, address, now, deadline) {
      return guard(
        'lockouts.lockedUntil',
        async () => readUntil(await redis.hmget(keys.lockout(systemUser), 'L', `l:${address()}`), now, keys.lockout(systemUser)),
        deadline,
      );
    },

    recordFailure(systemUser, address, now, policy, deadline) {
      return guard(
        'lockouts.recordFailure',
        async () => {
          const reply = await LOCKOUT_RECORD.run(
            redis,
            [keys.lockout(systemUser)],
            [
              decimal(now),
              address,
              decimal(policy.maxFailures),
              decimal(policy.userMaxFailures),
              decimal(policy.windowMs),
              decimal(policy.lockMs),
              positiveMs(EXPIRY_SLACK_MS),
            ],
          );
          if (reply === null) return null;
          const m = typeof reply === 'string' ? /^(user|address):(\d+)(?::(\d+))?$/.exec(reply) : null;
          if (m === null) throw new RedisDataError(`lockout-record returned ${JSON.stringify(reply)}.`);
          const until = parseNumber(m[2], 'lockout-record');
          // GT: a later lock of another address already listed stays.
          if (m[3] !== undefined) await redis.zadd(keys.lockoutIndex(), 'GT', m[3], systemUser);
          return { systemUser, address: m[1] === 'user' ? null : address, until };
        },
        deadline,
      );
    },

    clear(systemUser) {
      return guard('lockouts.clear', async () => {
        await Promise.all([redis.del(keys.lockout(systemUser)), redis.zrem(keys.lockoutIndex(), systemUser)]);
      });
    },

    list(now) {
      return guard('lockouts.list', async () => {
        await redis.zremrangebyscore(keys.lockoutIndex(), '-inf', decimal(now));
        const users = await redis.zrangebyscore(keys.lockoutIndex(), `(${decimal(now)}`, '+inf');
        const locks: Lockout[] = [];
        for (const systemUser of users) {
          const fields = await redis.hgetall(keys.lockout(systemUser));
          for (const [field, value] of Object.entries(fields)) {
            const until = Number(value);
            if (!(until > now)) continue;
            if (field === 'L') locks.push({ systemUser, address: null, until });
            else if (field.startsWith('l:')) locks.push({ systemUser, address: field.slice(2), until });
          }
        }
        return locks.sort((a, b) => a.until - b.until);
      });
    },
  };
}
