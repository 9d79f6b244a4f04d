import type { EventInstant, TripStore, TripVehicle } from '../types.js';
import { asArray, asString, decimal, LuaScript, parseNumber, pipelineReplies, RedisDataError, type Guard, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/*
 * In the provider's slot (keys.ts):
 *   {u}:trip         hash dominio → JSON {"nroSerie": ..., "registeredAt": epoch ms}
 *   {u}:tripidx      sorted set of the trip's Dominios (paging)
 *   {u}:lastreport   hash dominio → "epochMs:subMsTicks" (decimal integers), only ever moved forward
 * Last reports are kept for every Dominio the provider reported, registered or not (the embedded
 * store does the same), so a vehicle registered later shows its latest report at once.
 */

/** KEYS: trip hash, last-report hash → flat [dominio, trip JSON, last report or nil, ...]. */
export const TRIP_LIST = new LuaScript(
  'trip-list',
  `local t = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #t, 2 do
  out[#out + 1] = t[i]
  out[#out + 1] = t[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], t[i])
end
return out`,
);

/**
 * KEYS: trip hash, last-report hash, trip index. ARGV: after ("" = from the start), limit →
 * flat [dominio, trip JSON, last report or nil, ...] in lexical order. The index is rebuilt from the
 * hash when their sizes differ (trips written before it existed), once, in Redis.
 */
const TRIP_PAGE = new LuaScript(
  'trip-page',
  `if redis.call('ZCARD', KEYS[3]) ~= redis.call('HLEN', KEYS[1]) then
  redis.call('DEL', KEYS[3])
  local names = redis.call('HKEYS', KEYS[1])
  for i = 1, #names, 500 do
    local args = {}
    for j = i, math.min(i + 499, #names) do
      args[#args + 1] = 0
      args[#args + 1] = names[j]
    end
    redis.call('ZADD', KEYS[3], unpack(args))
  end
end
local from = '-'
if ARGV[1] ~= '' then from = '(' .. ARGV[1] end
local page = redis.call('ZRANGEBYLEX', KEYS[3], from, '+', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for i = 1, #page do
  local v = redis.call('HGET', KEYS[1], page[i])
  if v then
    out[#out + 1] = page[i]
    out[#out + 1] = v
    out[#out + 1] = redis.call('HGET', KEYS[2], page[i])
  end
end
return out`,
);

/** .NET ordinal order: UTF-16 code units, which is what JavaScript's < compares. */
function ordinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function decodeInstant(text: string, what: string): EventInstant {
  const m = /^(-?\d+):(\d+)$/.exec(text);
  if (m === null) throw new RedisDataError(`Malformed last report (${text.length} characters) for ${what}.`);
  return { epochMs: parseNumber(m[1], what), subMsTicks: parseNumber(m[2], what) };
}

function decodeVehicle(dominio: string, json: string, lastReport: unknown, what: string): TripVehicle {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new RedisDataError(`Trip vehicle ${dominio} of ${what} is not JSON.`);
  }
  const { nroSerie, registeredAt } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (typeof nroSerie !== 'string' || typeof registeredAt !== 'number') {
    throw new RedisDataError(`Trip vehicle ${dominio} of ${what} is malformed.`);
  }
  return {
    dominio,
    nroSerie,
    registeredAt,
    lastReport: lastReport === null ? null : decodeInstant(asString(lastReport, what), `${what} ${dominio}`),
  };
}

/** [dominio, trip JSON, last report or nil, ...] as vehicles. */
function triplets(flat: unknown[], systemUser: string): TripVehicle[] {
  if (flat.length % 3 !== 0) throw new RedisDataError('A trip script returned a partial triplet.');
  const out: TripVehicle[] = [];
  for (let i = 0; i < flat.length; i += 3) {
    const dominio = asString(flat[i], 'trip dominio');
    out.push(decodeVehicle(dominio, asString(flat[i + 1], 'trip vehicle'), flat[i + 2] ?? null, `trip of ${systemUser}`));
  }
  return out;
}

export function createRedisTripStore(redis: RedisClient, keys: RedisKeys, guard: Guard): TripStore {
  return {
    addVehicle(systemUser, dominio, nroSerie, now) {
      return guard('trips.addVehicle', async () => {
        // Re-registering restarts the registration: new NroSerie, FechaRegistracion = now. One HSET: atomic.
        await redis
          .multi()
          .hset(keys.trip(systemUser), dominio, JSON.stringify({ nroSerie, registeredAt: now }))
          .zadd(keys.tripIndex(systemUser), 0, dominio)
          .exec()
          .then(pipelineReplies);
      });
    },

    removeVehicle(systemUser, dominio) {
      return guard('trips.removeVehicle', async () => {
        const replies = pipelineReplies(await redis.multi().hdel(keys.trip(systemUser), dominio).zrem(keys.tripIndex(systemUser), dominio).exec());
        return Number(replies[0]) > 0;
      });
    },

    listVehicles(systemUser) {
      return guard('trips.listVehicles', async () => {
        const flat = asArray(await TRIP_LIST.run(redis, [keys.trip(systemUser), keys.lastReports(systemUser)], []), 'trip list');
        return triplets(flat, systemUser).sort((a, b) => ordinal(a.dominio, b.dominio));
      });
    },

    pageVehicles(systemUser, { afterDominio, limit }) {
      return guard('trips.pageVehicles', async () => {
        const flat = asArray(
          await TRIP_PAGE.run(redis, [keys.trip(systemUser), keys.lastReports(systemUser), keys.tripIndex(systemUser)], [afterDominio ?? '', decimal(limit)]),
          'trip page',
        );
        return triplets(flat, systemUser);
      });
    },

    getVehicle(systemUser, dominio) {
      return guard('trips.getVehicle', async () => {
        const [json, last] = pipelineReplies(await redis.multi().hget(keys.trip(systemUser), dominio).hget(keys.lastReports(systemUser), dominio).exec());
        if (json === null || json === undefined) return null;
        return decodeVehicle(dominio, asString(json, 'trip vehicle'), last ?? null, `trip of ${systemUser}`);
      });
    },

    isRegistered(systemUser, dominio, deadline) {
      return guard('trips.isRegistered', async () => (await redis.hexists(keys.trip(systemUser), dominio)) === 1, deadline);
    },

    clear(systemUser) {
      return guard('trips.clear', async () => {
        const replies = pipelineReplies(await redis.multi().hlen(keys.trip(systemUser)).del(keys.trip(systemUser), keys.tripIndex(systemUser)).exec());
        return parseNumber(String(replies[0]), 'trip size');
      });
    },
  };
}
