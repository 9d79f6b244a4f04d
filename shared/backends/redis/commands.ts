import type { CommandState, CommandStore, FinishOutcome } from '../types.js';
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
import { decodeCommand, effectiveState, entryJson, loadCommands } from './command-records.js';
import {
  COMMAND_CANCEL,
  COMMAND_CANCEL_ALL,
  COMMAND_DELIVER,
  COMMAND_ENQUEUE,
  COMMAND_FINISH,
  COMMAND_NUMBER,
  COMMAND_STATUS,
} from './command-scripts.js';
import type { RedisKeys } from './keys.js';

// The command keys, what each holds and the scripts that change them: command-scripts.ts; how a
// command is read back from them: command-records.ts.

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
