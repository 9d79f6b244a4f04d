import { LuaScript } from './connection.js';

/**
 * Lua scripts of the event-id state. The state is two keys written together: the counter and its
 * epoch (a random token). A script that hands out or claims ids first checks, atomically, that the
 * epoch is the one the caller's ids come from and that the counter exists; otherwise it changes
 * nothing and answers an error reply:
 *   `IDSTATE lost`            the epoch or the counter is missing (Redis flushed, restarted
 *                             without data, evicted): nothing may be issued until it is restored;
 *   `IDSTATE changed <epoch>` another epoch is current (restored, or the floor raised): the caller's
 *                             ids are dropped, it adopts <epoch> and allocates again.
 * Counter values are compared as decimal strings (length, then text): exact at any size, unlike
 * Lua's doubles. Decimal text in, decimal text out.
 */

/** KEYS[1] epoch, KEYS[2] counter; ARGV[1] the caller's epoch. */
const CHECK_STATE = `local epoch = redis.call('GET', KEYS[1])
if not epoch or redis.call('EXISTS', KEYS[2]) == 0 then return redis.error_reply('IDSTATE lost') end
if epoch ~= ARGV[1] then return redis.error_reply('IDSTATE changed ' .. epoch) end
`;

/** `cur < f` for non-negative decimal strings without leading zeros. */
const LESS = `local function less(cur, f) return #cur < #f or (#cur == #f and cur < f) end
`;

/**
 * KEYS: epoch, counter. ARGV: epoch, increment → the counter after INCRBY, as text (GET, because
 * INCRBY's integer reply would reach Lua and JavaScript as a double, inexact past 2^53).
 */
export const ID_BLOCK = new LuaScript(
  'id-block',
  `${CHECK_STATE}redis.call('INCRBY', KEYS[2], ARGV[2])
return redis.call('GET', KEYS[2])`,
);

/**
 * KEYS: epoch, counter. ARGV: epoch, floor, new epoch → the new epoch when the counter was raised
 * to the floor (the epoch changes with it, so every gateway drops the blocks it holds below the
 * floor at its next append), else nil.
 */
export const ID_FLOOR = new LuaScript(
  'id-floor',
  `${CHECK_STATE}${LESS}if less(redis.call('GET', KEYS[2]), ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
  redis.call('SET', KEYS[1], ARGV[3])
  return ARGV[3]
end
return false`,
);

/**
 * KEYS: epoch, counter, recovery lock. ARGV: lock token, floor, new epoch → the counter afterwards.
 * Only the holder of the recovery lock may restore: raises the counter to the floor (never lowers
 * it), writes the new epoch, releases the lock. `IDSTATE lock-lost` when the lock expired and
 * another gateway may be restoring.
 */
export const ID_RESTORE = new LuaScript(
  'id-restore',
  `if redis.call('GET', KEYS[3]) ~= ARGV[1] then return redis.error_reply('IDSTATE lock-lost') end
${LESS}local cur = redis.call('GET', KEYS[2])
if not cur or less(cur, ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2]) end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[3])
return redis.call('GET', KEYS[2])`,
);

/** KEYS: lock. ARGV: token, ttl ms → 1 when still ours (and extended), else 0. */
export const ID_LOCK_EXTEND = new LuaScript(
  'id-lock-extend',
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`,
);

/** KEYS: lock. ARGV: token → deletes the lock only while it is ours. */
export const ID_LOCK_RELEASE = new LuaScript(
  'id-lock-release',
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
);

/**
 * KEYS: epoch, counter, then dedupe keys. ARGV: epoch, the id to claim each key with, then the
 * window (ms) → per key: nil or the holder's id. Claims nothing unless the ids' epoch is current.
 */
export const DEDUPE_CLAIM_IN_EPOCH = new LuaScript(
  'dedupe-claim-in-epoch',
  `${CHECK_STATE}local px = ARGV[#ARGV]
local out = {}
for i = 3, #KEYS do
  out[i - 2] = redis.call('SET', KEYS[i], ARGV[i - 1], 'NX', 'PX', px, 'GET')
end
return out`,
);

export const ID_SCRIPTS: readonly LuaScript[] = [ID_BLOCK, ID_FLOOR, ID_RESTORE, ID_LOCK_EXTEND, ID_LOCK_RELEASE, DEDUPE_CLAIM_IN_EPOCH];
