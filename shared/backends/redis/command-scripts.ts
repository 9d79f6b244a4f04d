import { LuaScript } from './connection.js';

/*
 * Layout (see keys.ts; {u} = the provider's slot, {g:commands} a slot of its own):
 *   {g:commands}:seq             INCR → NUMERO (one sequence across providers)
 *   {g:commands}:owners          hash NUMERO → SystemUser (paging every provider's commands)
 *   {u}:command:{n}              hash: numero, systemUser, cmd, unidad, equipo, state, createdAt,
 *                                expiresAt, deliveries, lastDeliveredAt?, finishedAt? (absent = null)
 *   {u}:command:{n}:history      list of JSON {at, kind, message}, oldest first
 *   {u}:commands:open            zset of unfinished numeros, score = numero (queue order)
 *   {u}:commands:expiry          zset of the same numeros, score = expiresAt (finds overdue ones)
 *   {u}:commands:all             zset of every numero of the provider, score = numero (list())
 * A command is found by its provider and NUMERO: another provider's NUMERO names no key of this
 * provider, so a command can never be delivered to, or finished by, another provider. Every
 * read-modify-write of a command is one Lua script in its provider's slot, so gateways racing on a
 * command cannot interleave. Durability: commands must survive a restart (docs/protocol.md
 * §Commands): production Redis needs AOF (appendonly yes, appendfsync everysec or always).
 */

/** KEYS: seq, owners. ARGV: systemUser → the next NUMERO, recorded as this provider's. */
export const COMMAND_NUMBER = new LuaScript(
  'command-number',
  `local n = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], n, ARGV[1])
return n`,
);

/**
 * KEYS: open, expiry, all, command, history. ARGV: numero, systemUser, cmd, unidad, equipo, now,
 * expiresAt, history JSON → 1, or 0 when the NUMERO is taken already (the sequence went back: a
 * failover lost its last increments), which queues nothing.
 */
export const COMMAND_ENQUEUE = new LuaScript(
  'command-enqueue',
  `if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
local n = ARGV[1]
redis.call('HSET', KEYS[4], 'numero', n, 'systemUser', ARGV[2], 'cmd', ARGV[3], 'unidad', ARGV[4], 'equipo', ARGV[5],
  'state', 'pending', 'createdAt', ARGV[6], 'expiresAt', ARGV[7], 'deliveries', '0')
redis.call('RPUSH', KEYS[5], ARGV[8])
redis.call('ZADD', KEYS[1], n, n)
redis.call('ZADD', KEYS[2], ARGV[7], n)
redis.call('ZADD', KEYS[3], n, n)
return 1`,
);

/**
 * KEYS: open, expiry. ARGV: command key prefix, now, history JSON.
 * Stores the expiry of every overdue unfinished command of the provider (taking it out of the queue),
 * then counts and times a delivery of the lowest remaining numero → {HGETALL, history} or nil.
 */
export const COMMAND_DELIVER = new LuaScript(
  'command-deliver',
  `local overdue = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
for _, n in ipairs(overdue) do
  local key = ARGV[1] .. n
  local st = redis.call('HGET', key, 'state')
  if st == 'pending' or st == 'in_process' then redis.call('HSET', key, 'state', 'expired') end
  redis.call('ZREM', KEYS[1], n)
  redis.call('ZREM', KEYS[2], n)
end
while true do
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)
  if #first == 0 then return false end
  local key = ARGV[1] .. first[1]
  if redis.call('EXISTS', key) == 1 then
    local deliveries = redis.call('HINCRBY', key, 'deliveries', 1)
    redis.call('HSET', key, 'lastDeliveredAt', ARGV[2])
    -- Only the first delivery goes to the history: clients poll the same command until they
    -- finish it; the count and last time say the rest, and the history stays bounded.
    if deliveries == 1 then redis.call('RPUSH', key .. ':history', ARGV[3]) end
    return {redis.call('HGETALL', key), redis.call('LRANGE', key .. ':history', 0, -1)}
  end
  -- A numero whose hash is gone (deleted by hand): drop it from the queue.
  redis.call('ZREM', KEYS[1], first[1])
  redis.call('ZREM', KEYS[2], first[1])
end`,
);

/** KEYS: command, history. ARGV: systemUser, now, history JSON → 1 when appended, else 0. */
export const COMMAND_STATUS = new LuaScript(
  'command-status',
  `local f = redis.call('HMGET', KEYS[1], 'systemUser', 'state', 'expiresAt')
if f[1] ~= ARGV[1] then return 0 end
if (f[2] ~= 'pending' and f[2] ~= 'in_process') or tonumber(f[3]) <= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'state', 'in_process')
redis.call('RPUSH', KEYS[2], ARGV[3])
return 1`,
);

/**
 * KEYS: command, history, open, expiry. ARGV: systemUser, now, outcome state, history JSON, numero
 * → 'finished' | 'already-same' | 'rejected'.
 */
export const COMMAND_FINISH = new LuaScript(
  'command-finish',
  `local f = redis.call('HMGET', KEYS[1], 'systemUser', 'state', 'expiresAt')
if f[1] ~= ARGV[1] then return 'rejected' end
local st = f[2]
if (st == 'pending' or st == 'in_process') and tonumber(f[3]) <= tonumber(ARGV[2]) then st = 'expired' end
if st == 'pending' or st == 'in_process' then
  redis.call('HSET', KEYS[1], 'state', ARGV[3], 'finishedAt', ARGV[2])
  redis.call('RPUSH', KEYS[2], ARGV[4])
  redis.call('ZREM', KEYS[3], ARGV[5])
  redis.call('ZREM', KEYS[4], ARGV[5])
  return 'finished'
end
if st == ARGV[3] then return 'already-same' end
return 'rejected'`,
);

/**
 * KEYS: command, history, open, expiry. ARGV: systemUser, now, history JSON, numero
 * → 'cancelled' | 'not-open' | 'unknown' (no such command of this provider).
 */
export const COMMAND_CANCEL = new LuaScript(
  'command-cancel',
  `local f = redis.call('HMGET', KEYS[1], 'systemUser', 'state', 'expiresAt')
if f[1] ~= ARGV[1] then return 'unknown' end
if (f[2] == 'pending' or f[2] == 'in_process') and tonumber(f[3]) > tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finishedAt', ARGV[2])
  redis.call('RPUSH', KEYS[2], ARGV[3])
  redis.call('ZREM', KEYS[3], ARGV[4])
  redis.call('ZREM', KEYS[4], ARGV[4])
  return 'cancelled'
end
return 'not-open'`,
);

/**
 * KEYS: open, expiry. ARGV: command key prefix, now, history JSON → how many were cancelled.
 * Empties the provider's queue: unexpired commands are cancelled, overdue ones stored as expired.
 */
export const COMMAND_CANCEL_ALL = new LuaScript(
  'command-cancel-all',
  `local n = 0
for _, num in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local key = ARGV[1] .. num
  local f = redis.call('HMGET', key, 'state', 'expiresAt')
  if f[1] == 'pending' or f[1] == 'in_process' then
    if tonumber(f[2]) > tonumber(ARGV[2]) then
      redis.call('HSET', key, 'state', 'cancelled', 'finishedAt', ARGV[2])
      redis.call('RPUSH', key .. ':history', ARGV[3])
      n = n + 1
    else
      redis.call('HSET', key, 'state', 'expired')
    end
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
return n`,
);
