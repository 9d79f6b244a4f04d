import type { Redis } from 'ioredis';
import type { Session, SessionStore } from '../types.js';
import { asString, decimal, LuaScript, positiveMs, RedisDataError, type Guard } from './connection.js';
import type { RedisKeys } from './keys.js';

/*
 * One string per session: JSON {"u": systemUser, "e": expiresAt}. `e` is in the callers' clock and
 * decides liveness (tests control that clock); the key's real PX of ttl only lets Redis free
 * abandoned sessions (with real clocks both agree).
 */

/**
 * KEYS: session key. ARGV: now, new expiresAt, ttl ms → the new value, or nil when unknown or expired
 * (an expired one is deleted, so an earlier clock cannot revive it).
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
return nv`,
);

/** KEYS: session key. ARGV: now → 1 when a live session was removed, else 0. */
export const SESSION_DESTROY = new LuaScript(
  'session-destroy',
  `local v = redis.call('GET', KEYS[1])
if not v then return 0 end
redis.call('DEL', KEYS[1])
if tonumber(cjson.decode(v).e) > tonumber(ARGV[1]) then return 1 end
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
        await redis.set(keys.session(id), JSON.stringify({ u: systemUser, e: expiresAt }), 'PX', positiveMs(ttlMs));
        return { id, systemUser, expiresAt };
      });
    },

    touch(id, now, ttlMs) {
      return guard('sessions.touch', async () => {
        const reply = await SESSION_TOUCH.run(redis, [keys.session(id)], [decimal(now), decimal(now + ttlMs), positiveMs(ttlMs)]);
        return reply === null ? null : decodeSession(id, asString(reply, `session ${id}`));
      });
    },

    destroy(id, now) {
      return guard('sessions.destroy', async () => {
        return (await SESSION_DESTROY.run(redis, [keys.session(id)], [decimal(now)])) === 1;
      });
    },
  };
}
