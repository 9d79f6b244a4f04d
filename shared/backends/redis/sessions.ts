import type { Redis } from 'ioredis';
import type { Session, SessionStore } from '../types.js';
import { asString, decimal, LuaScript, positiveMs, RedisDataError, type Guard } from './connection.js';
import type { RedisKeys } from './keys.js';

/*
 * One string per session: JSON {"u": systemUser, "e": expiresAt}. `e` is in the callers' clock and
 * decides liveness (tests control that clock); the key's real PX of ttl only lets Redis free
 * abandoned sessions (with real clocks both agree).
 *
 * A sorted set per SystemUser, `sessions:{u}` (member id, score = expiresAt), lets an operator end
 * every session of a deleted provider. Login trims its expired members; a touch moves the score (and
 * indexes a session made before the index existed).
 */

/** KEYS: session key, index. ARGV: value, ttl ms, id, expiresAt, now. */
export const SESSION_CREATE = new LuaScript(
  'session-create',
  `redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
return 1`,
);

/**
 * KEYS: session key. ARGV: now, new expiresAt, ttl ms, index key prefix, id → the new value, or nil
 * when unknown or expired (an expired one is deleted, so an earlier clock cannot revive it).
 */
export const SESSION_TOUCH = new LuaScript(
  'session-touch',
  `local v = redis.call('GET', KEYS[1])
if not v then return false end
local s = cjson.decode(v)
if tonumber(s.e) <= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return false
end
local nv = '{"u":' .. cjson.encode(s.u) .. ',"e":' .. ARGV[2] .. '}'
redis.call('SET', KEYS[1], nv, 'PX', ARGV[3])
redis.call('ZADD', ARGV[4] .. s.u, ARGV[2], ARGV[5])
return nv`,
);

/** KEYS: index. ARGV: session key prefix, now → how many of the SystemUser's sessions were live. */
export const SESSION_END_ALL = new LuaScript(
  'session-end-all',
  `local live = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local v = redis.call('GET', ARGV[1] .. id)
  if v then
    if tonumber(cjson.decode(v).e) > tonumber(ARGV[2]) then live = live + 1 end
    redis.call('DEL', ARGV[1] .. id)
  end
end
redis.call('DEL', KEYS[1])
return live`,
);

/** KEYS: session key. ARGV: now, index key prefix, id → 1 when a live session was removed, else 0. */
export const SESSION_DESTROY = new LuaScript(
  'session-destroy',
  `local v = redis.call('GET', KEYS[1])
if not v then return 0 end
redis.call('DEL', KEYS[1])
local s = cjson.decode(v)
redis.call('ZREM', ARGV[2] .. s.u, ARGV[3])
if tonumber(s.e) > tonumber(ARGV[1]) then return 1 end
return 0`,
);

function decodeSession(id: string, value: string): Session {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new RedisDataError(`Session ${id} is not JSON.`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new RedisDataError(`Session ${id} is not an object.`);
  const { u, e } = parsed as { u?: unknown; e?: unknown };
  if (typeof u !== 'string' || typeof e !== 'number') throw new RedisDataError(`Session ${id} lacks u or e.`);
  return { id, systemUser: u, expiresAt: e };
}

export function createRedisSessionStore(redis: Redis, keys: RedisKeys, guard: Guard): SessionStore {
  return {
    create(id, systemUser, now, ttlMs) {
      return guard('sessions.create', async () => {
        const expiresAt = now + ttlMs;
        await SESSION_CREATE.run(
          redis,
          [keys.session(id), keys.sessionIndex(systemUser)],
          [JSON.stringify({ u: systemUser, e: expiresAt }), positiveMs(ttlMs), id, decimal(expiresAt), decimal(now)],
        );
        return { id, systemUser, expiresAt };
      });
    },

    touch(id, now, ttlMs) {
      return guard('sessions.touch', async () => {
        const reply = await SESSION_TOUCH.run(
          redis,
          [keys.session(id)],
          [decimal(now), decimal(now + ttlMs), positiveMs(ttlMs), keys.sessionIndexPrefix(), id],
        );
        return reply === null ? null : decodeSession(id, asString(reply, `session ${id}`));
      });
    },

    destroy(id, now) {
      return guard('sessions.destroy', async () => {
        return (await SESSION_DESTROY.run(redis, [keys.session(id)], [decimal(now), keys.sessionIndexPrefix(), id])) === 1;
      });
    },

    endAll(systemUser, now) {
      return guard('sessions.endAll', async () => {
        const live = await SESSION_END_ALL.run(redis, [keys.sessionIndex(systemUser)], [keys.session(''), decimal(now)]);
        if (typeof live !== 'number') throw new RedisDataError('session-end-all returned a non-integer.');
        return live;
      });
    },
  };
}
