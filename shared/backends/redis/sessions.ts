import type { Session, SessionStore } from '../types.js';
import { MAX_SESSION_STAMP, sessionIdStamp, stampSessionId } from '../../domain/session-ids.js';
import { asString, decimal, LuaScript, positiveMs, RedisDataError, type Guard, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';
import { SLOTS } from './slots.js';

/*
 * One string per session: JSON {"u": systemUser, "e": expiresAt}. `e` is in the callers' clock and
 * decides liveness (tests control that clock); the key's real PX of ttl only lets Redis free
 * abandoned sessions (with real clocks both agree).
 *
 * A sorted set per SystemUser, its `sessions` key (member id, score = expiresAt), lets an operator
 * end every session of a deleted provider. Login trims its expired members; a touch moves the score
 * (and indexes a session made before the index existed).
 *
 * Both live in the provider's hash slot (keys.ts): the id handed out carries that slot in its last
 * three characters (shared/domain/session-ids.ts), so a touch, which knows only the id, finds the
 * session's key and can update the index in the same script on the same shard.
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
 * KEYS: session key. ARGV: now, new expiresAt, ttl ms, index key before and after the SystemUser, id
 * → the new value, or nil when unknown or expired (an expired one is deleted, so an earlier clock
 * cannot revive it).
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
redis.call('ZADD', ARGV[4] .. s.u .. ARGV[5], ARGV[2], ARGV[6])
return nv`,
);

/**
 * KEYS: index, then the key of each session it listed. ARGV: now, then each session's id → how many
 * of them were live. The keys are computed from the ids by the caller (keys.ts `session`), so a
 * session moved from the earlier layout (whose id carries no slot) is found too.
 */
export const SESSION_END_ALL = new LuaScript(
  'session-end-all',
  `local live = 0
for i = 2, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if v then
    if tonumber(cjson.decode(v).e) > tonumber(ARGV[1]) then live = live + 1 end
    redis.call('DEL', KEYS[i])
  end
  redis.call('ZREM', KEYS[1], ARGV[i])
end
return live`,
);

/** KEYS: session key. ARGV: now, index key before and after the SystemUser, id → 1 when a live session was removed, else 0. */
export const SESSION_DESTROY = new LuaScript(
  'session-destroy',
  `local v = redis.call('GET', KEYS[1])
if not v then return 0 end
redis.call('DEL', KEYS[1])
local s = cjson.decode(v)
redis.call('ZREM', ARGV[2] .. s.u .. ARGV[3], ARGV[4])
if tonumber(s.e) > tonumber(ARGV[1]) then return 1 end
return 0`,
);

/**
 * A touch that finds the expiry less than this short of where a slide would move it leaves the
 * session as it is: one read instead of a write per request (a session used every second is slid
 * every SLIDE_RESOLUTION, not every second). A session then expires at most this much before a
 * slide on every request would have kept it: 10 s of a 20-minute session, a twentieth of a short one.
 */
const SLIDE_RESOLUTION_MS = 10_000;

function slideResolution(ttlMs: number): number {
  return Math.min(SLIDE_RESOLUTION_MS, ttlMs / 20);
}

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

export function createRedisSessionStore(redis: RedisClient, keys: RedisKeys, guard: Guard): SessionStore {
  const index = keys.sessionIndexParts();
  return {
    create(given, systemUser, now, ttlMs) {
      // The provider's slot in the id's stamp; the stamp's spare top bit stays as random as it came.
      const id = stampSessionId(given, keys.providerSlot(systemUser) | (sessionIdStamp(given) & (MAX_SESSION_STAMP - (SLOTS - 1))));
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

    touch(id, now, ttlMs, deadline) {
      return guard(
        'sessions.touch',
        async () => {
          const key = keys.session(id);
          // Read first: most touches find the session slid a moment ago, and leave it as it is.
          const stored = await redis.get(key);
          if (stored === null) return null;
          const session = decodeSession(id, stored);
          if (session.expiresAt > now && now + ttlMs - session.expiresAt < slideResolution(ttlMs)) return session;
          // Due for a slide, or expired (deleted then, so an earlier clock cannot revive it): the script, atomically.
          const reply = await SESSION_TOUCH.run(redis, [key], [decimal(now), decimal(now + ttlMs), positiveMs(ttlMs), index.before, index.after, id]);
          return reply === null ? null : decodeSession(id, asString(reply, `session ${id}`));
        },
        deadline,
      );
    },

    destroy(id, now) {
      return guard('sessions.destroy', async () => {
        return (await SESSION_DESTROY.run(redis, [keys.session(id)], [decimal(now), index.before, index.after, id])) === 1;
      });
    },

    endAll(systemUser, now) {
      return guard('sessions.endAll', async () => {
        const ids = await redis.zrange(keys.sessionIndex(systemUser), '0', '-1');
        const live = await SESSION_END_ALL.run(redis, [keys.sessionIndex(systemUser), ...ids.map((id) => keys.session(id))], [decimal(now), ...ids]);
        if (typeof live !== 'number') throw new RedisDataError('session-end-all returned a non-integer.');
        return live;
      });
    },
  };
}
