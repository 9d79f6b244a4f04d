import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { BackendUnavailableError } from '../types.js';
import { DeadlineTimer, TimeoutError } from '../../util/async.js';
import { timeLeft, type Deadline } from '../../util/deadline.js';
import { errorMessage } from '../../util/error-message.js';

/** The client of any form: one node or Sentinels (Redis), or Redis Cluster. The command methods are the same. */
export type RedisClient = Redis | Cluster;

export interface RedisLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Redis could not be reached (connection refused or lost, reconnect attempts used up, command
 * timeout). The operation may or may not have been applied: every store operation is safe to retry
 * (the protocol's answers for a retried call are defined, e.g. ComandoProcesado → 'already-same').
 * The gateway maps it to "temporarily unavailable" (-5 / a Server fault / false).
 */
export class RedisUnavailableError extends BackendUnavailableError {
  override readonly name = 'RedisUnavailableError';
  constructor(
    readonly operation: string,
    readonly endpoint: string,
    cause: unknown,
  ) {
    super(`Redis at ${endpoint} is unavailable (${operation}): ${errorMessage(cause)}`, { cause });
  }
}

/**
 * A value in Redis that this module did not write in this shape (corruption or a foreign writer).
 * It fails the call as it is: retrying would meet the same value. (Why a reply of the wrong shape
 * is not taken for a connection out of step: docs/operations.md §Stalls.)
 */
export class RedisDataError extends Error {
  override readonly name = 'RedisDataError';
}

/** Errors Redis answered with (WRONGTYPE, script errors...): Redis is up, so they are not "unavailable". */
function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError';
}

/**
 * Replies that say "not here, not now" rather than "no": a node demoted or still loading, and
 * Redis Cluster's redirections the client gave up following (a slot moving, a shard failing over).
 * The command was not applied; the call fails as unavailable, to be retried.
 */
const TRANSIENT_REPLY = /^(READONLY|LOADING|MASTERDOWN|MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/;
function isTransientReply(err: unknown): boolean {
  return isReplyError(err) && TRANSIENT_REPLY.test((err as Error).message);
}

function isNoScript(err: unknown): boolean {
  return isReplyError(err) && err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** host:port of a redis:// URL, without credentials, for error messages. */
export function describeEndpoint(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'the configured URL';
  }
}

/**
 * Wraps connection-level failures, and replies that mean "not here, not now", as
 * RedisUnavailableError; other Redis replies (ReplyError), data of the wrong shape (RedisDataError)
 * and programming errors pass through unchanged.
 */
export function makeGuard(endpoint: string) {
  // Every call's share of its request's deadline, timed by one timer (the timer's own `ms` is unused).
  const deadlines = new DeadlineTimer(0, 'Redis');
  /**
   * Runs `fn`, mapping its failure. With a `deadline` (the request's, shared/util/deadline.ts) the
   * call fails as unavailable when it passes, whatever the command's own timeout, and is not sent
   * at all once it has passed. A command given up this way is not withdrawn: its reply, when it
   * comes, is matched to it and dropped, so the connection stays in step.
   */
  return async function guard<T>(operation: string, fn: () => Promise<T>, deadline?: Deadline): Promise<T> {
    if (deadline !== undefined && !(timeLeft(deadline) > 0)) throw new RedisUnavailableError(operation, endpoint, new Error("no time left before the request's deadline"));
    try {
      return deadline === undefined ? await fn() : await deadlines.raceUntil(fn(), deadline);
    } catch (err) {
      if (err instanceof TimeoutError) throw new RedisUnavailableError(operation, endpoint, new Error("the request's deadline passed"));
      if (isTransientReply(err)) throw new RedisUnavailableError(operation, endpoint, err);
      if (
        err instanceof RedisUnavailableError ||
        err instanceof RedisDataError ||
        err instanceof TypeError ||
        err instanceof RangeError ||
        isReplyError(err)
      ) {
        throw err;
      }
      throw new RedisUnavailableError(operation, endpoint, err);
    }
  };
}

export type Guard = ReturnType<typeof makeGuard>;

type RedisArg = string | number;

/**
 * A Lua script run with EVALSHA, falling back to EVAL (which also caches it) when the server does
 * not know it yet, e.g. after a Redis restart.
 */
export class LuaScript {
  readonly sha: string;
  constructor(
    readonly name: string,
    readonly lua: string,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(redis: RedisClient, keys: readonly string[], args: readonly RedisArg[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Reply parsing: replies are `unknown` and checked, so a corrupt value fails loudly.

export function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new RedisDataError(`Expected a string for ${what}, got ${typeof value}.`);
  return value;
}

export function asArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new RedisDataError(`Expected an array for ${what}, got ${typeof value}.`);
  return value;
}

export function asStrings(value: unknown, what: string): string[] {
  return asArray(value, what).map((v) => asString(v, what));
}

/** A finite number stored as decimal text. */
export function parseNumber(text: string | undefined, what: string): number {
  if (text === undefined || text === '' || !/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) {
    // The value is not echoed: a reply out of step with its command may be another key's secret (a password hash).
    throw new RedisDataError(`Expected a decimal number for ${what}, got ${text === undefined ? 'nothing' : `${text.length} characters of something else`}.`);
  }
  return Number(text);
}

/** The flat [field, value, ...] array that HGETALL returns inside Lua, as a record. */
export function flatToRecord(value: unknown, what: string): Record<string, string> {
  const flat = asStrings(value, what);
  if (flat.length % 2 !== 0) throw new RedisDataError(`Odd field/value list for ${what}.`);
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/** Throws the first error of an ioredis pipeline result; returns the replies. */
export function pipelineReplies(results: [Error | null, unknown][] | null): unknown[] {
  if (results === null) throw new Error('Pipeline was discarded.');
  return results.map(([err, reply]) => {
    if (err !== null) throw err;
    return reply;
  });
}

/** Integer milliseconds for PX / PEXPIRE, which need a positive integer. */
export function positiveMs(ms: number): number {
  return Number.isFinite(ms) ? Math.max(1, Math.ceil(ms)) : 1;
}

/** Decimal text of a time or count passed to Lua (never Lua's float formatting). */
export function decimal(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`Not a finite number: ${n}`);
  return String(n);
}
