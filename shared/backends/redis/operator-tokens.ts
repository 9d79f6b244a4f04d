import {
  isRole,
  LAST_USED_RESOLUTION_MS,
  MAX_OPERATOR_TOKENS,
  type OperatorStores,
  type OperatorToken,
  type OperatorTokenStore,
  type TokenCreateOutcome,
} from '../operators.js';
import { RedisAdminLockoutStore } from './admin-lockouts.js';
import { RedisAuditStore } from './audit.js';
import { asArray, decimal, flatToRecord, LuaScript, parseNumber, RedisDataError, type Guard, type RedisClient } from './connection.js';
import { OperatorKeys } from './keys.js';

/** KEYS: token hash, hash→name key, names set. ARGV: max tokens, name, field, value, … → 'created' | 'exists' | 'full'. */
const OPERATOR_TOKEN_CREATE = new LuaScript(
  'operator-token-create',
  `if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 'exists' end
if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[1]) then return 'full' end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[2])
return 'created'`,
);

/**
 * KEYS: hash→name key. ARGV: token key prefix, now, resolution ms, token hash → the token's
 * HGETALL plus its name (lastUsedAt moved to now when live and older than the resolution), or false.
 */
const OPERATOR_TOKEN_USE = new LuaScript(
  'operator-token-use',
  `local name = redis.call('GET', KEYS[1])
if not name then return false end
local key = ARGV[1] .. name
local h = redis.call('HGETALL', key)
local t = {}
for i = 1, #h, 2 do t[h[i]] = h[i + 1] end
if t.tokenHash ~= ARGV[4] then return false end
local now = tonumber(ARGV[2])
local live = (not t.expiresAt) or tonumber(t.expiresAt) > now
if live and ((not t.lastUsedAt) or now - tonumber(t.lastUsedAt) >= tonumber(ARGV[3])) then
  redis.call('HSET', key, 'lastUsedAt', ARGV[2])
  h = redis.call('HGETALL', key)
end
h[#h + 1] = 'name'
h[#h + 1] = name
return h`,
);

/** KEYS: token hash, names set. ARGV: name, hash→name key prefix → 1 revoked, 0 none. */
const OPERATOR_TOKEN_REVOKE = new LuaScript(
  'operator-token-revoke',
  `local hash = redis.call('HGET', KEYS[1], 'tokenHash')
redis.call('SREM', KEYS[2], ARGV[1])
if not hash then return 0 end
redis.call('DEL', KEYS[1], ARGV[2] .. hash)
return 1`,
);

/** KEYS: names set. ARGV: token key prefix → one HGETALL (with the name) per token. */
const OPERATOR_TOKEN_LIST = new LuaScript(
  'operator-token-list',
  `local out = {}
for _, name in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local h = redis.call('HGETALL', ARGV[1] .. name)
  if #h > 0 then
    h[#h + 1] = 'name'
    h[#h + 1] = name
    out[#out + 1] = h
  end
end
return out`,
);

function decodeToken(h: Record<string, string>, name: string): OperatorToken {
  const { role, tokenHash, createdBy } = h;
  if (!isRole(role) || tokenHash === undefined || createdBy === undefined) throw new RedisDataError(`Operator token ${name} is malformed.`);
  return {
    name,
    role,
    tokenHash,
    createdAt: parseNumber(h.createdAt, `${name}.createdAt`),
    createdBy,
    expiresAt: h.expiresAt === undefined ? null : parseNumber(h.expiresAt, `${name}.expiresAt`),
    lastUsedAt: h.lastUsedAt === undefined ? null : parseNumber(h.lastUsedAt, `${name}.lastUsedAt`),
  };
}

/**
 * Operators' tokens in Redis. Nothing is cached on a gateway: every request reads its token, so a
 * revocation on one gateway refuses the next request on all of them.
 */
function createRedisOperatorTokenStore(redis: RedisClient, keys: OperatorKeys, guard: Guard): OperatorTokenStore {
  return {
    create(t) {
      return guard('operatorTokens.create', async () => {
        const fields = ['role', t.role, 'tokenHash', t.tokenHash, 'createdAt', decimal(t.createdAt), 'createdBy', t.createdBy];
        if (t.expiresAt !== null) fields.push('expiresAt', decimal(t.expiresAt));
        if (t.lastUsedAt !== null) fields.push('lastUsedAt', decimal(t.lastUsedAt));
        const reply = await OPERATOR_TOKEN_CREATE.run(redis, [keys.token(t.name), keys.tokenByHash(t.tokenHash), keys.tokens()], [
          decimal(MAX_OPERATOR_TOKENS),
          t.name,
          ...fields,
        ]);
        if (reply !== 'created' && reply !== 'exists' && reply !== 'full') throw new RedisDataError(`operator-token-create returned ${JSON.stringify(reply)}.`);
        return reply satisfies TokenCreateOutcome;
      });
    },
    use(tokenHash, now) {
      return guard('operatorTokens.use', async () => {
        const reply = await OPERATOR_TOKEN_USE.run(redis, [keys.tokenByHash(tokenHash)], [
          keys.tokenPrefix(),
          decimal(now),
          decimal(LAST_USED_RESOLUTION_MS),
          tokenHash,
        ]);
        if (reply === null) return null;
        const h = flatToRecord(reply, 'operator-token-use');
        return decodeToken(h, h.name ?? '');
      });
    },
    list() {
      return guard('operatorTokens.list', async () => {
        const reply = asArray(await OPERATOR_TOKEN_LIST.run(redis, [keys.tokens()], [keys.tokenPrefix()]), 'operator-token-list');
        return reply
          .map((flat) => {
            const h = flatToRecord(flat, 'operator-token-list');
            return decodeToken(h, h.name ?? '');
          })
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      });
    },
    revoke(name) {
      return guard('operatorTokens.revoke', async () => {
        return (await OPERATOR_TOKEN_REVOKE.run(redis, [keys.token(name), keys.tokens()], [name, keys.tokenHashPrefix()])) === 1;
      });
    },
  };
}

/** The scale-out mode's operator stores, all in the deployment's Redis (run it with AOF: docs/admin-api.md §The audit trail). */
export function createRedisOperatorStores(redis: RedisClient, prefix: string, guard: Guard): OperatorStores {
  const keys = new OperatorKeys(prefix);
  return {
    tokens: createRedisOperatorTokenStore(redis, keys, guard),
    audit: new RedisAuditStore(redis, keys, guard),
    lockouts: new RedisAdminLockoutStore(redis, keys, guard),
  };
}
