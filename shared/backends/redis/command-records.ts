import type { Command, CommandHistoryEntry, CommandState } from '../types.js';
import { asStrings, RedisDataError, parseNumber, type RedisClient } from './connection.js';
import type { RedisKeys } from './keys.js';

/*
 * A command as its keys hold it (a hash and a history list: command-scripts.ts) and read back:
 * decoded, its state as of `now`, for the store (commands.ts) and its pages (command-pages.ts).
 */

const STATES: readonly CommandState[] = ['pending', 'in_process', 'succeeded', 'failed', 'expired', 'cancelled'];
const KINDS: readonly CommandHistoryEntry['kind'][] = ['queued', 'delivered', 'status', 'finished'];

function isUnfinished(state: CommandState): boolean {
  return state === 'pending' || state === 'in_process';
}

/** An unfinished command past its expiry is reported as expired, whether or not that was stored yet. */
export function effectiveState(state: CommandState, expiresAt: number, now: number): CommandState {
  return isUnfinished(state) && expiresAt <= now ? 'expired' : state;
}

export function entryJson(at: number, kind: CommandHistoryEntry['kind'], message: string): string {
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

export function decodeCommand(h: Record<string, string>, history: readonly string[], now: number, what: string): Command {
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
