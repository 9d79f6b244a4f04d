import type { Command, CommandHistoryEntry, CommandState, CommandStore, FinishOutcome } from '../types.js';
import {
  asArray,
  asStrings,
  decimal,
  flatToRecord,
  LuaScript,
  parseNumber,
  pipelineReplies,
  RedisDataError,
  type Guard,
  type RedisClient,
} from './connection.js';
import { pageCommands } from './command-pages.js';
import type { RedisKeys } from './keys.js';

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

const STATES: readonly CommandState[] = ['pending', 'in_process', 'succeeded', 'failed', 'expired', 'cancelled'];
const KINDS: readonly CommandHistoryEntry['kind'][] = ['queued', 'delivered', 'status', 'finished'];

function isUnfinished(state: CommandState): boolean {
  return state === 'pending' || state === 'in_process';
}

/** An unfinished command past its expiry is reported as expired, whether or not that was stored yet. */
function effectiveState(state: CommandState, expiresAt: number, now: number): CommandState {
  return isUnfinished(state) && expiresAt <= now ? 'expired' : state;
}

function entryJson(at: number, kind: CommandHistoryEntry['kind'], message: string): string {
  const entry: CommandHistoryEntry = { at, kind, message };
  return JSON.stringify(entry);
}

function decodeEntry(text: string, what: string): CommandHistoryEntry {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RedisDataError(`History entry of ${what} is not JSON.`);
  }
  const { at, kind, message } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const k = KINDS.find((x) => x === kind);
  if (typeof at !== 'number' || k === undefined || typeof message !== 'string') {
    throw new RedisDataError(`Malformed history entry of ${what}.`);
  }
  return { at, kind: k, message };
}

function decodeCommand(h: Record<string, string>, history: readonly string[], now: number, what: string): Command {
  const { systemUser, cmd, unidad, equipo } = h;
  const state = STATES.find((s) => s === h.state);
  if (systemUser === undefined || cmd === undefined || unidad === undefined || equipo === undefined || state === undefined) {
    throw new RedisDataError(`Command hash ${what} is incomplete.`);
  }
  const expiresAt = parseNumber(h.expiresAt, `${what} expiresAt`);
  return {
    numero: parseNumber(h.numero, `${what} numero`),
    systemUser,
    cmd,
    unidad,
    equipo,
    state: effectiveState(state, expiresAt, now),
    createdAt: parseNumber(h.createdAt, `${what} createdAt`),
    expiresAt,
    deliveries: parseNumber(h.deliveries, `${what} deliveries`),
    lastDeliveredAt: h.lastDeliveredAt === undefined ? null : parseNumber(h.lastDeliveredAt, `${what} lastDeliveredAt`),
    finishedAt: h.finishedAt === undefined ? null : parseNumber(h.finishedAt, `${what} finishedAt`),
    history: history.map((e) => decodeEntry(e, what)),
  };
}

/** NUMERO arrives from the wire; anything but a positive integer cannot name a command. */
function validNumero(numero: number): boolean {
  return Number.isSafeInteger(numero) && numero > 0;
}

/**
 * A queued command must survive a failover to a replica: it is written on a connection of its own,
 * then WAIT blocks that connection until `replicas` replicas hold it (or `waitMs` passed). In a
 * cluster the NUMERO and the command are on two shards: each write is followed by its own WAIT, in
 * the same pipeline (so on the same node's connection).
 */
interface DurableCommandWrites {
  redis: RedisClient;
  replicas: number;
  waitMs: number;
}

/** Fewer replicas than required confirmed a queued command; it was cancelled, the operator is told to retry. */
class CommandNotReplicatedError extends Error {
  override readonly name = 'CommandNotReplicatedError';
}

function notReplicated(numero: number, acknowledged: number, durable: DurableCommandWrites, outcome: string): CommandNotReplicatedError {
  return new CommandNotReplicatedError(`Command ${numero} reached ${acknowledged} of ${durable.replicas} Redis replicas within ${durable.waitMs} ms; ${outcome}.`);
}

/**
 * Runs a script, and with `durable` WAITs on the same connection right after it: the reply, and how
 * many replicas held the writes by then (null without durable). EVAL, not EVALSHA: a pipeline
 * cannot fall back on NOSCRIPT, and commands are queued rarely.
 */
async function written(
  redis: RedisClient,
  durable: DurableCommandWrites | null,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<{ reply: unknown; replicas: number | null }> {
  if (durable === null) return { reply: await script.run(redis, keys, args), replicas: null };
  const [reply, replicas] = pipelineReplies(await durable.redis.pipeline().eval(script.lua, keys.length, ...keys, ...args).wait(durable.replicas, durable.waitMs).exec());
  if (typeof replicas !== 'number') throw new RedisDataError('WAIT returned a non-integer.');
  return { reply, replicas };
}

export function createRedisCommandStore(redis: RedisClient, keys: RedisKeys, guard: Guard, durable: DurableCommandWrites | null = null): CommandStore {
  const store: CommandStore = {
    enqueue(c) {
      return guard('commands.enqueue', async () => {
        const queued = entryJson(c.now, 'queued', '');
        const number = await written(redis, durable, COMMAND_NUMBER, [keys.commandSeq(), keys.commandOwners()], [c.systemUser]);
        const numero = number.reply;
        if (typeof numero !== 'number') throw new RedisDataError('command-number returned a non-integer.');
        // A NUMERO a failover could hand out again: queue nothing under it.
        if (durable !== null && (number.replicas ?? 0) < durable.replicas) throw notReplicated(numero, number.replicas ?? 0, durable, 'nothing was queued');
        const u = c.systemUser;
        const command = await written(
          redis,
          durable,
          COMMAND_ENQUEUE,
          [keys.commandsOpen(u), keys.commandsExpiry(u), keys.commandsAll(u), keys.command(u, numero), keys.commandHistory(u, numero)],
          [decimal(numero), u, c.cmd, c.unidad, c.equipo, decimal(c.now), decimal(c.expiresAt), queued],
        );
        if (command.reply === 0) throw new Error(`NUMERO ${numero} is taken already (the sequence went back after a failover); the command was not queued.`);
        if (command.reply !== 1) throw new RedisDataError(`command-enqueue returned ${JSON.stringify(command.reply)}.`);
        if (durable !== null && (command.replicas ?? 0) < durable.replicas) {
          // Not answered "queued": a failover now could lose it. Cancel it so that the error also
          // means "not queued" (unless Redis failed right now too: then the cancel fails with it).
          await store.cancel(c.systemUser, numero, c.now);
          throw notReplicated(numero, command.replicas ?? 0, durable, 'it was cancelled');
        }
        return {
          numero,
          systemUser: c.systemUser,
          cmd: c.cmd,
          unidad: c.unidad,
          equipo: c.equipo,
          state: effectiveState('pending', c.expiresAt, c.now),
          createdAt: c.now,
          expiresAt: c.expiresAt,
          deliveries: 0,
          lastDeliveredAt: null,
          finishedAt: null,
          history: [{ at: c.now, kind: 'queued', message: '' }],
        };
      });
    },

    deliverNext(systemUser, now) {
      return guard('commands.deliverNext', async () => {
        const reply = await COMMAND_DELIVER.run(
          redis,
          [keys.commandsOpen(systemUser), keys.commandsExpiry(systemUser)],
          [keys.commandPrefix(systemUser), decimal(now), entryJson(now, 'delivered', '')],
        );
        if (reply === null) return null;
        const [hash, history] = asArray(reply, 'command-deliver reply');
        return decodeCommand(flatToRecord(hash, 'delivered command'), asStrings(history, 'history'), now, 'delivered command');
      });
    },

    appendStatus(systemUser, numero, message, now) {
      if (!validNumero(numero)) return Promise.resolve(false);
      return guard('commands.appendStatus', async () => {
        const reply = await COMMAND_STATUS.run(
          redis,
          [keys.command(systemUser, numero), keys.commandHistory(systemUser, numero)],
          [systemUser, decimal(now), entryJson(now, 'status', message)],
        );
        return reply === 1;
      });
    },

    finish(systemUser, numero, succeeded, now) {
      if (!validNumero(numero)) return Promise.resolve<FinishOutcome>('rejected');
      return guard('commands.finish', async () => {
        const outcome: CommandState = succeeded ? 'succeeded' : 'failed';
        const reply = await COMMAND_FINISH.run(
          redis,
          [keys.command(systemUser, numero), keys.commandHistory(systemUser, numero), keys.commandsOpen(systemUser), keys.commandsExpiry(systemUser)],
          [systemUser, decimal(now), outcome, entryJson(now, 'finished', outcome), decimal(numero)],
        );
        if (reply === 'finished' || reply === 'already-same' || reply === 'rejected') return reply;
        throw new RedisDataError(`command-finish returned ${JSON.stringify(reply)}.`);
      });
    },

    list(systemUser, now) {
      return guard('commands.list', async () => {
        // Two round trips and no script: a provider with a long history must not block Redis.
        const numeros = await redis.zrange(keys.commandsAll(systemUser), '0', '-1');
        return loadCommands(redis, keys, numeros.map((n) => ({ systemUser, numero: parseNumber(n, 'command numero') })), now);
      });
    },

    get(systemUser, numero, now) {
      if (!validNumero(numero)) return Promise.resolve(null);
      return guard('commands.get', async () => {
        const [command] = await loadCommands(redis, keys, [{ systemUser, numero }], now);
        return command?.systemUser === systemUser ? command : null;
      });
    },

    cancel(systemUser, numero, now) {
      if (!validNumero(numero)) return Promise.resolve(null);
      return guard('commands.cancel', async () => {
        const reply = await COMMAND_CANCEL.run(
          redis,
          [keys.command(systemUser, numero), keys.commandHistory(systemUser, numero), keys.commandsOpen(systemUser), keys.commandsExpiry(systemUser)],
          [systemUser, decimal(now), entryJson(now, 'finished', 'cancelled'), decimal(numero)],
        );
        if (reply === 'unknown') return null;
        if (reply !== 'cancelled' && reply !== 'not-open') throw new RedisDataError(`command-cancel returned ${JSON.stringify(reply)}.`);
        const [command] = await loadCommands(redis, keys, [{ systemUser, numero }], now);
        if (command === undefined) throw new RedisDataError(`Command ${numero} vanished right after command-cancel.`);
        return { outcome: reply, command };
      });
    },

    cancelAll(systemUser, now) {
      return guard('commands.cancelAll', async () => {
        const n = await COMMAND_CANCEL_ALL.run(
          redis,
          [keys.commandsOpen(systemUser), keys.commandsExpiry(systemUser)],
          [keys.commandPrefix(systemUser), decimal(now), entryJson(now, 'finished', 'cancelled')],
        );
        if (typeof n !== 'number') throw new RedisDataError('command-cancel-all returned a non-integer.');
        return n;
      });
    },

    page(query, now) {
      return guard('commands.page', () => pageCommands(redis, keys, query, now));
    },
  };
  return store;
}

/** A command named by its provider and NUMERO: where its keys are. */
export interface CommandRef {
  systemUser: string;
  numero: number;
}

/**
 * The commands these refs name, in that order; those whose hash is gone are left out. The reads
 * are issued together: one round trip per shard (auto-pipelining), whatever providers they are of.
 */
export async function loadCommands(redis: RedisClient, keys: RedisKeys, refs: readonly CommandRef[], now: number): Promise<Command[]> {
  if (refs.length === 0) return [];
  const replies = await Promise.all(
    refs.map(({ systemUser, numero }) => Promise.all([redis.hgetall(keys.command(systemUser, numero)), redis.lrange(keys.commandHistory(systemUser, numero), 0, -1)])),
  );
  const out: Command[] = [];
  replies.forEach(([record, history], i) => {
    if (Object.keys(record).length === 0) return; // deleted by hand
    out.push(decodeCommand(record, asStrings(history, 'history'), now, `command ${refs[i]!.numero}`));
  });
  return out;
}
