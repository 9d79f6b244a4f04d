import type { CommandPage, CommandPageQuery } from '../types.js';
import { loadCommands, type CommandRef } from './command-records.js';
import type { RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/** Commands read per round trip while paging. */
const CHUNK = 100;
/** Commands examined per page at most: a state filter that rarely matches ends a page early rather than reading the whole history. */
const MAX_EXAMINED = 5_000;

/**
 * Commands newest first. NUMERO comes from one counter across providers, so without a provider
 * the candidates are simply every NUMERO below the start, counting down, each found through the
 * owners hash (NUMERO → SystemUser, in the sequence's slot); with one, its `all` set. No index of
 * every command is kept: paging is rare and the hot path stays as it is.
 */
export async function pageCommands(redis: RedisClient, keys: RedisKeys, query: CommandPageQuery, now: number): Promise<CommandPage> {
  if (!(query.limit >= 1)) return { commands: [], nextBeforeNumero: null };
  let below = query.beforeNumero ?? Number.MAX_SAFE_INTEGER;
  if (query.systemUser === undefined) {
    const seq = Number((await redis.get(keys.commandSeq())) ?? '0');
    below = Math.min(below, seq + 1);
  }
  const commands: CommandPage['commands'] = [];
  let examined = 0;
  while (below > 1 && examined < MAX_EXAMINED) {
    const numeros = await candidates(redis, keys, query.systemUser, below);
    if (numeros.length === 0) {
      below = 1;
      break;
    }
    examined += numeros.length;
    for (const command of await loadCommands(redis, keys, await owned(redis, keys, query.systemUser, numeros), now)) {
      if (query.state !== undefined && command.state !== query.state) continue;
      commands.push(command);
      if (commands.length === query.limit) return { commands, nextBeforeNumero: command.numero };
    }
    below = numeros[numeros.length - 1] ?? 1;
  }
  return { commands, nextBeforeNumero: below > 1 ? below : null };
}

/** Up to CHUNK numeros below `below`, highest first. */
async function candidates(redis: RedisClient, keys: RedisKeys, systemUser: string | undefined, below: number): Promise<number[]> {
  if (systemUser !== undefined) {
    const members = await redis.zrevrangebyscore(keys.commandsAll(systemUser), `(${below}`, '-inf', 'LIMIT', 0, CHUNK);
    return members.map(Number);
  }
  const out: number[] = [];
  for (let n = below - 1; n >= 1 && out.length < CHUNK; n--) out.push(n);
  return out;
}

/** Each numero with its provider; numeros no provider owns (never queued, or a failed enqueue) are left out. */
async function owned(redis: RedisClient, keys: RedisKeys, systemUser: string | undefined, numeros: readonly number[]): Promise<CommandRef[]> {
  if (systemUser !== undefined) return numeros.map((numero) => ({ systemUser, numero }));
  const owners = await redis.hmget(keys.commandOwners(), ...numeros.map(String));
  const refs: CommandRef[] = [];
  numeros.forEach((numero, i) => {
    const owner = owners[i];
    if (typeof owner === 'string') refs.push({ systemUser: owner, numero });
  });
  return refs;
}
