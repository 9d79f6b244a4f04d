import { randomUUID } from 'node:crypto';
import { errorMessage } from '../../util/error-message.js';
import { asString, LuaScript, type RedisClient, type RedisLogger } from './connection.js';
import { KEY_LAYOUT, OperatorKeys, type RedisKeys } from './keys.js';

/**
 * The key layout the data is in. Releases before Redis Cluster support wrote layout 1: the same
 * families without hash tags (`{p}provider:{u}`, `{p}command:{n}`, ...). A process opening Redis
 * finds out which layout it holds:
 *
 * - `{p}{g:layout}:version` says 2: nothing to do (but layout-1 keys that appeared since, written by
 *   a process of the earlier release still running, are moved too, and the line saying so names them);
 * - it says more than 2: a later release's data; this one refuses to start rather than misread it;
 * - it is absent and no layout-1 data is there (a new deployment, every cluster): it is set to 2;
 * - it is absent and layout-1 data is there: one process (under a lock key, with an expiry it keeps
 *   extending) moves every key to its layout-2 name, then sets the version; the others wait for it.
 *
 * Moving a key is RENAME when its new name is free, else a merge that keeps what the new name holds
 * (hashes field by field, sets and sorted sets united, counters the higher of the two). Nothing is
 * copied between shards: only the one-node and Sentinel forms can hold layout 1. Dropped: sessions
 * (their ids carry no hash slot; their clients log in again once). Not moved: resend dedupe claims
 * (their key is a digest that does not name the provider; they expire within DEDUPE_WINDOW_MINUTES,
 * and a resend in that window after the upgrade may be stored twice under a new id, as after a
 * failover) and admin token-guess counts (they expire within their window).
 * docs/migration.md §Redis key layout says how to upgrade.
 */

/** KEYS: the old name, the new one. ARGV: 'max' to keep the higher of two counters → 'absent' | 'moved' | 'merged'. */
const MOVE_KEY = new LuaScript(
  'layout-move-key',
  `local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 'absent' end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  return 'moved'
end
if redis.call('TYPE', KEYS[2]).ok == t then
  if t == 'hash' then
    local h = redis.call('HGETALL', KEYS[1])
    for i = 1, #h, 2 do redis.call('HSETNX', KEYS[2], h[i], h[i + 1]) end
  elseif t == 'set' then
    redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
  elseif t == 'zset' then
    redis.call('ZUNIONSTORE', KEYS[2], 2, KEYS[2], KEYS[1], 'AGGREGATE', 'MAX')
  elseif t == 'string' and ARGV[1] == 'max' then
    local old, new = tonumber(redis.call('GET', KEYS[1])), tonumber(redis.call('GET', KEYS[2]))
    if old and new and old > new then redis.call('SET', KEYS[2], redis.call('GET', KEYS[1]), 'KEEPTTL') end
  end
end
redis.call('DEL', KEYS[1])
return 'merged'`,
);

/** The names layout 1 gave each family. */
class Layout1 {
  constructor(private readonly p: string) {}
  providers = (): string => `${this.p}providers`;
  provider = (u: string): string => `${this.p}provider:${u}`;
  lockout = (u: string): string => `${this.p}lockout:${u}`;
  lockouts = (): string => `${this.p}lockouts`;
  session = (id: string): string => `${this.p}session:${id}`;
  sessions = (u: string): string => `${this.p}sessions:${u}`;
  poison = (): string => `${this.p}poison`;
  poisonIndex = (): string => `${this.p}poison:index`;
  commandSeq = (): string => `${this.p}command:seq`;
  command = (n: number): string => `${this.p}command:${n}`;
  commandHistory = (n: number): string => `${this.p}command:${n}:history`;
  commandsOpen = (u: string): string => `${this.p}commands:open:${u}`;
  commandsExpiry = (u: string): string => `${this.p}commands:expiry:${u}`;
  commandsAll = (u: string): string => `${this.p}commands:all:${u}`;
  trip = (u: string): string => `${this.p}trip:${u}`;
  tripIndex = (u: string): string => `${this.p}tripidx:${u}`;
  lastReports = (u: string): string => `${this.p}lastreport:${u}`;
  idBlocksChecked = (): string => `${this.p}event:id-blocks-checked`;
  tokens = (): string => `${this.p}optokens`;
  token = (name: string): string => `${this.p}optoken:${name}`;
  tokenByHash = (hash: string): string => `${this.p}optoken-hash:${hash}`;
  audit = (part: string): string => `${this.p}audit:${part}`;
  /** Keys only layout 1 has, one of which any deployment that stored anything holds. */
  markers = (): string[] => [this.providers(), this.commandSeq(), this.tokens(), this.audit('seq'), this.poisonIndex(), this.lockouts(), this.idBlocksChecked()];
}

export interface LayoutOptions {
  clustered: boolean;
  logger: RedisLogger;
  /** How long a process waits for another one moving the data (default 10 minutes). */
  waitMs?: number;
  /** Expiry of the lock key, extended while moving (default 30 s). */
  lockMs?: number;
}

/** What a move did: keys renamed or merged, per family. */
export type MoveReport = Record<string, number>;

/** Makes sure the data is in layout 2 before the stores use it (see the top of this file). */
export async function ensureKeyLayout(redis: RedisClient, keys: RedisKeys, options: LayoutOptions): Promise<MoveReport | null> {
  const old = new Layout1(keys.prefix);
  const version = await redis.get(keys.layout());
  if (version !== null && Number(version) > KEY_LAYOUT) {
    throw new Error(`Redis holds data in key layout ${version} (prefix "${keys.prefix}"), written by a later release; this one reads layout ${KEY_LAYOUT}. Run the later release.`);
  }
  if (options.clustered) {
    if (version === null) await redis.set(keys.layout(), String(KEY_LAYOUT), 'NX');
    return null;
  }
  const present = (await redis.exists(...old.markers())) > 0;
  if (version !== null) {
    if (!present) return null;
    options.logger.warn({ prefix: keys.prefix }, 'Redis: keys of the earlier layout appeared after the move (a process of the earlier release is still running?); moving them too');
    return moveUnderLock(redis, keys, old, options);
  }
  if (!present) {
    await redis.set(keys.layout(), String(KEY_LAYOUT), 'NX');
    return null;
  }
  return moveUnderLock(redis, keys, old, options);
}

async function moveUnderLock(redis: RedisClient, keys: RedisKeys, old: Layout1, options: LayoutOptions): Promise<MoveReport | null> {
  const lockMs = options.lockMs ?? 30_000;
  const deadline = Date.now() + (options.waitMs ?? 600_000);
  const owner = randomUUID();
  for (;;) {
    if ((await redis.set(keys.layoutLock(), owner, 'PX', lockMs, 'NX')) === 'OK') break;
    // Another process is moving it: wait for the version, or for its lock to lapse (it died).
    if (Date.now() > deadline) throw new Error(`Redis: another process has been moving the data to key layout ${KEY_LAYOUT} for too long (lock ${keys.layoutLock()}).`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    if ((await redis.get(keys.layout())) === String(KEY_LAYOUT) && (await redis.exists(keys.layoutLock())) === 0) return null;
  }
  const keepLock = setInterval(() => {
    redis.set(keys.layoutLock(), owner, 'PX', lockMs, 'XX').catch(() => undefined);
  }, lockMs / 3);
  keepLock.unref();
  try {
    const started = Date.now();
    options.logger.warn({ prefix: keys.prefix }, `Redis: moving the data to key layout ${KEY_LAYOUT} (hash tags for Redis Cluster); other processes wait`);
    const report = await moveLayout1(redis, keys, old);
    await redis.set(keys.layout(), String(KEY_LAYOUT));
    options.logger.warn({ prefix: keys.prefix, keys: report, seconds: (Date.now() - started) / 1000 }, `Redis: data moved to key layout ${KEY_LAYOUT}`);
    return report;
  } catch (err) {
    throw new Error(`Redis: moving the data to key layout ${KEY_LAYOUT} failed (it resumes where it stopped at the next start): ${errorMessage(err)}`, { cause: err });
  } finally {
    clearInterval(keepLock);
    if ((await redis.get(keys.layoutLock()).catch(() => null)) === owner) await redis.del(keys.layoutLock()).catch(() => undefined);
  }
}

/** Renames per round: each one command, written together. */
const CHUNK = 500;

async function moveLayout1(redis: RedisClient, keys: RedisKeys, old: Layout1): Promise<MoveReport> {
  const report: MoveReport = {};
  const move = async (family: string, pairs: readonly (readonly [string, string, ('max' | '')?])[]): Promise<void> => {
    for (let i = 0; i < pairs.length; i += CHUNK) {
      const replies = await Promise.all(pairs.slice(i, i + CHUNK).map(([from, to, rule]) => MOVE_KEY.run(redis, [from, to], [rule ?? ''])));
      const done = replies.filter((r) => r === 'moved' || r === 'merged').length;
      if (done > 0) report[family] = (report[family] ?? 0) + done;
    }
  };
  const ops = new OperatorKeys(keys.prefix);

  // Commands first: their hashes name their providers (deleted ones included). The providers the
  // new layout knows count too: an old process may have written theirs after a first move.
  const users = new Set<string>([
    ...(await redis.smembers(old.providers())),
    ...(await redis.zrange(old.lockouts(), '0', '-1')),
    ...(await redis.smembers(keys.providers())),
  ]);
  const seq = Number((await redis.get(old.commandSeq())) ?? '0');
  for (let first = 1; first <= seq; first += CHUNK) {
    const numeros = Array.from({ length: Math.min(CHUNK, seq - first + 1) }, (_, k) => first + k);
    const owners = await Promise.all(numeros.map((n) => redis.hget(old.command(n), 'systemUser')));
    const pairs: [string, string][] = [];
    const owned: [number, string][] = [];
    numeros.forEach((n, k) => {
      const u = owners[k];
      if (u === null || u === undefined) return;
      users.add(u);
      owned.push([n, u]);
      pairs.push([old.command(n), keys.command(u, n)], [old.commandHistory(n), keys.commandHistory(u, n)]);
    });
    if (owned.length > 0) await redis.hset(keys.commandOwners(), ...owned.flatMap(([n, u]) => [String(n), u]));
    await move('commands', pairs);
  }

  // Each provider's keys. Its sessions (found through its index) are dropped, not moved: their ids
  // carry no hash slot, so on a cluster they could not share their provider's shard.
  for (const u of users) {
    const sessionIds = await redis.zrange(old.sessions(u), '0', '-1');
    const dropped = sessionIds.length === 0 ? 0 : await redis.del(...sessionIds.map((id) => old.session(id)));
    if (dropped > 0) report['sessions dropped'] = (report['sessions dropped'] ?? 0) + dropped;
    await redis.del(old.sessions(u));
    await move('providers', [
      [old.provider(u), keys.provider(u)],
      [old.lockout(u), keys.lockout(u)],
      [old.commandsOpen(u), keys.commandsOpen(u)],
      [old.commandsExpiry(u), keys.commandsExpiry(u)],
      [old.commandsAll(u), keys.commandsAll(u)],
      [old.trip(u), keys.trip(u)],
      [old.tripIndex(u), keys.tripIndex(u)],
      [old.lastReports(u), keys.lastReports(u)],
    ]);
  }

  // Operators' tokens: the hash→name keys are found through each token's hash.
  const names = await redis.smembers(old.tokens());
  const hashes = await Promise.all(names.map((name) => redis.hget(old.token(name), 'tokenHash')));
  await move(
    'operator tokens',
    names.flatMap((name, k) => {
      const hash = hashes[k];
      const pairs: [string, string][] = [[old.token(name), ops.token(name)]];
      if (typeof hash === 'string') pairs.push([old.tokenByHash(hash), ops.tokenByHash(hash)]);
      return pairs;
    }),
  );

  // The audit trail: its identity and scope indexes are named in its entries.
  const indexes = new Set<string>();
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(old.audit('entries'), cursor, 'COUNT', 1000);
    cursor = next;
    for (let i = 1; i < flat.length; i += 2) {
      try {
        const entry = JSON.parse(asString(flat[i], 'audit entry')) as { identity?: unknown; scope?: unknown };
        if (typeof entry.identity === 'string') indexes.add(`identity:${entry.identity}`);
        if (typeof entry.scope === 'string') indexes.add(`scope:${entry.scope}`);
      } catch {
        // A malformed entry names no index; the trail's reader skips it the same way.
      }
    }
  } while (cursor !== '0');
  await move('audit', [
    [old.audit('seq'), ops.audit('seq'), 'max'],
    ...['entries', 'all', 'time', ...indexes].map((part) => [old.audit(part), ops.audit(part)] as const),
  ]);

  // The cross-provider lists and counters last: the layout-1 markers go only once the rest moved.
  await move('lists', [
    [old.commandSeq(), keys.commandSeq(), 'max'],
    [old.poison(), keys.poison()],
    [old.poisonIndex(), keys.poisonIndex()],
    [old.lockouts(), keys.lockoutIndex()],
    [old.idBlocksChecked(), keys.idBlocksChecked()],
    [old.tokens(), ops.tokens()],
    [old.providers(), keys.providers()],
  ]);
  return report;
}
