import type { Provider, ProviderPatch, ProviderStore } from '../types.js';
import { decimal, flatToRecord, LuaScript, parseNumber, RedisDataError, type Guard, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/*
 * One hash per provider, fields:
 *   systemUser, passwordHash            text
 *   enabled, requireRegisteredVehicles  '1' | '0'
 *   timeZone                            IANA name; field absent = null (the service's zone)
 *   createdAt, updatedAt                epoch ms, decimal text
 * in the provider's slot, plus the set of every SystemUser (keys.ts `providers()`, a slot of its own).
 * Not cached here: another gateway or the admin CLI may change a provider at any time (the auth
 * layer caches verifications briefly).
 *
 * The hash and the list are on different shards in a cluster, so they are written one after the
 * other, in the order that leaves nothing wrong behind a failure in between: a create adds the name
 * to the list after the hash (and again on a create that finds the hash: a retried create repairs a
 * list the first one could not reach); a delete removes the hash first, and the list skips names
 * whose hash is gone.
 */

/** KEYS: provider hash. ARGV: field, value, ... → 1 created, 0 exists. */
export const PROVIDER_CREATE = new LuaScript(
  'provider-create',
  `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`,
);

/** KEYS: provider hash. ARGV: '1' to remove timeZone, field, value, ... → HGETALL after, or nil. */
export const PROVIDER_UPDATE = new LuaScript(
  'provider-update',
  `if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if ARGV[1] == '1' then redis.call('HDEL', KEYS[1], 'timeZone') end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return redis.call('HGETALL', KEYS[1])`,
);

/** Provider hashes read per round of list() (each one command, written together). */
const LIST_CHUNK = 1000;

function flag(value: string | undefined, what: string): boolean {
  if (value === '1') return true;
  if (value === '0') return false;
  throw new RedisDataError(`Expected '1' or '0' for ${what}, got ${value === undefined ? 'nothing' : `${value.length} characters of something else`}.`);
}

function decodeProvider(h: Record<string, string>, key: string): Provider {
  const { systemUser, passwordHash } = h;
  if (systemUser === undefined || passwordHash === undefined) {
    throw new RedisDataError(`Provider hash ${key} lacks systemUser or passwordHash.`);
  }
  return {
    systemUser,
    passwordHash,
    enabled: flag(h.enabled, `${key} enabled`),
    timeZone: h.timeZone ?? null,
    requireRegisteredVehicles: flag(h.requireRegisteredVehicles, `${key} requireRegisteredVehicles`),
    createdAt: parseNumber(h.createdAt, `${key} createdAt`),
    updatedAt: parseNumber(h.updatedAt, `${key} updatedAt`),
  };
}

function encodeProvider(p: Provider): string[] {
  const fields = [
    'systemUser',
    p.systemUser,
    'passwordHash',
    p.passwordHash,
    'enabled',
    p.enabled ? '1' : '0',
    'requireRegisteredVehicles',
    p.requireRegisteredVehicles ? '1' : '0',
    'createdAt',
    decimal(p.createdAt),
    'updatedAt',
    decimal(p.updatedAt),
  ];
  if (p.timeZone !== null) fields.push('timeZone', p.timeZone);
  return fields;
}

/** UTF-8 byte order, as the embedded store's `ORDER BY system_user` (SQLite BINARY collation). */
function byUtf8(a: Provider, b: Provider): number {
  return Buffer.compare(Buffer.from(a.systemUser, 'utf8'), Buffer.from(b.systemUser, 'utf8'));
}

export function createRedisProviderStore(redis: RedisClient, keys: RedisKeys, guard: Guard): ProviderStore {
  return {
    create(provider) {
      return guard('providers.create', async () => {
        const created = await PROVIDER_CREATE.run(redis, [keys.provider(provider.systemUser)], encodeProvider(provider));
        await redis.sadd(keys.providers(), provider.systemUser);
        return created === 1 ? { ...provider } : null;
      });
    },

    get(systemUser, deadline) {
      return guard(
        'providers.get',
        async () => {
          const key = keys.provider(systemUser);
          const h = await redis.hgetall(key);
          return Object.keys(h).length === 0 ? null : decodeProvider(h, key);
        },
        deadline,
      );
    },

    update(systemUser, patch: ProviderPatch, now) {
      return guard('providers.update', async () => {
        // A key present with the value undefined means "not patched" (as in the embedded store).
        const fields: string[] = [];
        if (patch.passwordHash !== undefined) fields.push('passwordHash', patch.passwordHash);
        if (patch.enabled !== undefined) fields.push('enabled', patch.enabled ? '1' : '0');
        if (patch.requireRegisteredVehicles !== undefined) {
          fields.push('requireRegisteredVehicles', patch.requireRegisteredVehicles ? '1' : '0');
        }
        if (typeof patch.timeZone === 'string') fields.push('timeZone', patch.timeZone);
        fields.push('updatedAt', decimal(now));
        const key = keys.provider(systemUser);
        const reply = await PROVIDER_UPDATE.run(redis, [key], [patch.timeZone === null ? '1' : '0', ...fields]);
        return reply === null ? null : decodeProvider(flatToRecord(reply, key), key);
      });
    },

    delete(systemUser) {
      return guard('providers.delete', async () => {
        const deleted = await redis.del(keys.provider(systemUser));
        await redis.srem(keys.providers(), systemUser);
        return deleted === 1;
      });
    },

    list() {
      return guard('providers.list', async () => {
        const names = await redis.smembers(keys.providers());
        const out: Provider[] = [];
        for (let i = 0; i < names.length; i += LIST_CHUNK) {
          const chunk = names.slice(i, i + LIST_CHUNK).map((u) => keys.provider(u));
          // Written together: one round trip per shard (auto-pipelining).
          const hashes = await Promise.all(chunk.map((key) => redis.hgetall(key)));
          hashes.forEach((h, k) => {
            if (Object.keys(h).length > 0) out.push(decodeProvider(h, chunk[k]!));
          });
        }
        return out.sort(byUtf8);
      });
    },
  };
}
