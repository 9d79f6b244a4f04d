import {
  AUDIT_MAX_ENTRIES,
  auditScope,
  isRole,
  scanAuditPage,
  type AuditEntry,
  type AuditIndex,
  type AuditOutcome,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditStore,
} from '../operators.js';
import { decimal, LuaScript, RedisDataError, type Guard, type RedisClient } from './connection.js';
import { infoOfPrimaries } from './client.js';
import type { OperatorKeys } from './keys.js';

/*
 * The audit trail in Redis, append-only, every key in one hash slot ({g:audit}, operator-tokens.ts):
 *   {g:audit}:seq                counter: entry ids, one sequence for every gateway
 *   {g:audit}:entries            hash id → JSON of the entry (with its scope)
 *   {g:audit}:all                sorted set id, score id (newest-first paging)
 *   {g:audit}:time               sorted set id, score at (retention)
 *   {g:audit}:identity:{name}    sorted set id, score id (the identity filter)
 *   {g:audit}:scope:{scope}      sorted set id, score id (the target filter: provider/acme)
 * An entry leaves only through retention or the cap (AUDIT_MAX_ENTRIES), which remove it from
 * every index in the same script.
 */

/** Removes one entry from the hash and every index. Needs `entries`, `all`, `time`, `identityPrefix`, `scopePrefix` in scope. */
const DROP = `local function drop(id)
  local json = redis.call('HGET', entries, id)
  if json then
    local e = cjson.decode(json)
    if type(e.identity) == 'string' then redis.call('ZREM', identityPrefix .. e.identity, id) end
    if type(e.scope) == 'string' then redis.call('ZREM', scopePrefix .. e.scope, id) end
    redis.call('HDEL', entries, id)
  end
  redis.call('ZREM', all, id)
  redis.call('ZREM', time, id)
end
local function dropOverCap(cap, most)
  local over = math.min(redis.call('ZCARD', all) - cap, most)
  if over <= 0 then return 0 end
  for _, id in ipairs(redis.call('ZRANGE', all, 0, over - 1)) do drop(id) end
  return over
end`;

/**
 * KEYS: seq, entries, all, time, identity index, scope index. ARGV: at, JSON, has identity ('1'/'0'),
 * has scope, cap, identity prefix, scope prefix → the new id. Past the cap the oldest few go at once.
 */
const AUDIT_APPEND = new LuaScript(
  'audit-append',
  `local entries, all, time, identityPrefix, scopePrefix = KEYS[2], KEYS[3], KEYS[4], ARGV[6], ARGV[7]
${DROP}
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', entries, id, ARGV[2])
redis.call('ZADD', all, id, id)
redis.call('ZADD', time, ARGV[1], id)
if ARGV[3] == '1' then redis.call('ZADD', KEYS[5], id, id) end
if ARGV[4] == '1' then redis.call('ZADD', KEYS[6], id, id) end
dropOverCap(tonumber(ARGV[5]), 10)
return id`,
);

/** KEYS: entries, all, time. ARGV: older than, max, cap, identity prefix, scope prefix → how many were dropped. */
const AUDIT_EXPIRE = new LuaScript(
  'audit-expire',
  `local entries, all, time, identityPrefix, scopePrefix = KEYS[1], KEYS[2], KEYS[3], ARGV[4], ARGV[5]
${DROP}
local max = tonumber(ARGV[2])
local old = redis.call('ZRANGEBYSCORE', time, '-inf', '(' .. ARGV[1], 'LIMIT', 0, max)
for _, id in ipairs(old) do drop(id) end
return #old + dropOverCap(tonumber(ARGV[3]), max - #old)`,
);

interface StoredEntry extends Omit<AuditRecord, 'role' | 'outcome'> {
  role: string | null;
  outcome: string;
  scope: string | null;
}

const OUTCOMES: readonly string[] = ['ok', 'failed', 'refused'];

function decode(id: number, json: string): AuditEntry {
  let e: Partial<StoredEntry>;
  try {
    e = JSON.parse(json) as Partial<StoredEntry>;
  } catch {
    throw new RedisDataError(`Audit entry ${id} is not JSON.`);
  }
  if (typeof e.at !== 'number' || typeof e.route !== 'string' || typeof e.status !== 'number' || !Array.isArray(e.changes)) {
    throw new RedisDataError(`Audit entry ${id} is malformed.`);
  }
  return {
    id,
    at: e.at,
    identity: typeof e.identity === 'string' ? e.identity : null,
    role: isRole(e.role) ? e.role : null,
    address: typeof e.address === 'string' ? e.address : '',
    method: typeof e.method === 'string' ? e.method : '',
    route: e.route,
    target: typeof e.target === 'string' ? e.target : null,
    status: e.status,
    outcome: (OUTCOMES.includes(e.outcome ?? '') ? e.outcome : 'failed') as AuditOutcome,
    changes: e.changes.filter((c): c is string => typeof c === 'string'),
    detail: e.detail ?? null,
    requestId: typeof e.requestId === 'string' ? e.requestId : '',
  };
}

export class RedisAuditStore implements AuditStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: OperatorKeys,
    private readonly guard: Guard,
    private readonly maxEntries = AUDIT_MAX_ENTRIES,
  ) {}

  private identityKey(identity: string): string {
    return this.keys.audit(`identity:${identity}`);
  }
  private scopeKey(scope: string): string {
    return this.keys.audit(`scope:${scope}`);
  }

  append(record: AuditRecord): Promise<AuditEntry> {
    return this.guard('audit.append', async () => {
      const scope = record.target === null ? null : auditScope(record.target);
      const stored: StoredEntry = { ...record, scope };
      const k = this.keys;
      const id = await AUDIT_APPEND.run(
        this.redis,
        [k.audit('seq'), k.audit('entries'), k.audit('all'), k.audit('time'), this.identityKey(record.identity ?? ''), this.scopeKey(scope ?? '')],
        [
          decimal(record.at),
          JSON.stringify(stored),
          record.identity === null ? '0' : '1',
          scope === null ? '0' : '1',
          decimal(this.maxEntries),
          k.audit('identity:'),
          k.audit('scope:'),
        ],
      );
      if (typeof id !== 'number') throw new RedisDataError(`audit-append returned ${JSON.stringify(id)}.`);
      return { ...record, changes: [...record.changes], id };
    });
  }

  page(query: AuditQuery): Promise<AuditPage> {
    return this.guard('audit.page', () => scanAuditPage(query, (index, before, chunk) => this.read(index, before, chunk)));
  }

  expire(olderThan: number, max: number): Promise<number> {
    return this.guard('audit.expire', async () => {
      const k = this.keys;
      const n = await AUDIT_EXPIRE.run(
        this.redis,
        [k.audit('entries'), k.audit('all'), k.audit('time')],
        [decimal(olderThan), decimal(max), decimal(this.maxEntries), k.audit('identity:'), k.audit('scope:')],
      );
      if (typeof n !== 'number') throw new RedisDataError(`audit-expire returned ${JSON.stringify(n)}.`);
      return n;
    });
  }

  /**
   * The trail must outlive a restart of Redis, not only of a gateway: with AOF every write is in
   * the log within a second (appendfsync everysec); with snapshots alone, whatever came after the
   * last one is lost.
   */
  durability(): Promise<string | null> {
    return this.guard('audit.durability', async () => {
      // Every primary of a cluster: the trail is on one of them, the providers and commands on all.
      const infos = await infoOfPrimaries(this.redis, 'persistence');
      if (infos.every((info) => /^aof_enabled:1\s*$/m.test(info))) return null;
      return 'Redis runs without AOF (appendonly no): audit entries (and providers, commands, tokens) written since its last snapshot are lost if Redis restarts; run it with appendonly yes';
    });
  }

  /** Up to `chunk` entries of the index below `before`, newest first; ids whose entry is gone are skipped. */
  private async read(index: AuditIndex, before: number | null, chunk: number): Promise<AuditEntry[]> {
    const key =
      index.kind === 'identity' ? this.identityKey(index.identity) : index.kind === 'scope' ? this.scopeKey(index.scope) : this.keys.audit('all');
    let below = before;
    for (;;) {
      const ids = await this.redis.zrevrangebyscore(key, below === null ? '+inf' : `(${decimal(below)}`, '-inf', 'LIMIT', 0, chunk);
      if (ids.length === 0) return [];
      const values = await this.redis.hmget(this.keys.audit('entries'), ...ids);
      const out: AuditEntry[] = [];
      ids.forEach((id, i) => {
        const json = values[i];
        if (typeof json === 'string') out.push(decode(Number(id), json));
      });
      if (out.length > 0) return out;
      // Every one of them was dropped meanwhile (retention in flight): read on below them.
      below = Number(ids[ids.length - 1]);
    }
  }
}
