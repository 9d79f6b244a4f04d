import type { Logger } from '../../shared/runtime/logger.js';

/**
 * Why providers' calls were refused: every negative answer and fault the operation layer gives
 * (and the bindings' refusals of values they cannot read), with the reason in words an operator
 * can pass on: "FechaHoraEvento \"yesterday\" is not a dateTime", "wrong password". Kept in memory,
 * bounded (the last few per SystemUser, for a bounded number of SystemUsers), and logged at most
 * once a minute per SystemUser (plus a count of the rest), so a device that sends the same bad
 * event every second neither floods the log nor hides. Never a password, never a whole body:
 * values quoted in a reason are cut short.
 */
export interface Refusal {
  /** ISO-8601 time of the answer. */
  at: string;
  /** The SystemUser the call named or its session belonged to; null when it named none (a value the binding could not read). */
  systemUser: string | null;
  operation: string;
  /** What the client got: `-3`, `false`, `Client fault`… */
  answer: string;
  reason: string;
  /** The caller's address (TRUSTED_PROXIES applied). */
  address: string;
}

/** What the layers that refuse know of the call. */
export interface RefusedCall {
  readonly operation: string;
  readonly now: number;
  readonly clientAddress: () => string;
}

interface RefusalLogOptions {
  logger?: Logger;
  /** Refusals kept per SystemUser (default 20). */
  perSystemUser?: number;
  /** SystemUsers kept at most, the least recently refused dropped first (default 1000). */
  systemUsers?: number;
  /** Log a SystemUser's refusals at most this often (default one minute). */
  logEveryMs?: number;
  /** Lines at most in that time for all SystemUsers together (default 60): made-up SystemUsers cannot flood the log either. */
  linesPerInterval?: number;
}

interface Kept {
  /** Oldest first, each with its place in this log's order (times tie within a millisecond). */
  refusals: { seq: number; refusal: Refusal }[];
  nextLogAt: number;
  notLogged: number;
}

/** The key of refusals that name no SystemUser. */
const NOBODY = '\0';

/** A SystemUser kept longer than this is cut (no stored one is longer than 64). */
const MAX_SYSTEM_USER = 64;
/** A reason kept longer than this is cut. */
const MAX_REASON = 300;

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/** A value as a reason quotes it: JSON-quoted, cut to 40 characters. */
export function quoted(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

export class RefusalLog {
  private readonly kept = new Map<string, Kept>();
  private readonly perSystemUser: number;
  private readonly systemUsers: number;
  private readonly logEveryMs: number;
  private readonly linesPerInterval: number;
  private seq = 0;
  /** The log's own interval: lines written in it, refusals left unlogged past its limit. */
  private interval = { start: 0, lines: 0, unlogged: 0 };

  constructor(private readonly options: RefusalLogOptions = {}) {
    this.perSystemUser = options.perSystemUser ?? 20;
    this.systemUsers = options.systemUsers ?? 1000;
    this.logEveryMs = options.logEveryMs ?? 60_000;
    this.linesPerInterval = options.linesPerInterval ?? 60;
  }

  record(sentSystemUser: string | null, call: RefusedCall, answer: string | number | boolean, sentReason: string): void {
    // Both may quote what the client sent (an over-long SystemUser, a value in a fault's text): bounded.
    const systemUser = sentSystemUser === null ? null : cut(sentSystemUser, MAX_SYSTEM_USER);
    const reason = cut(sentReason, MAX_REASON);
    const key = systemUser ?? NOBODY;
    let kept = this.kept.get(key);
    if (kept === undefined) {
      if (this.kept.size >= this.systemUsers) {
        const oldest = this.kept.keys().next();
        if (oldest.done !== true) this.kept.delete(oldest.value);
      }
      kept = { refusals: [], nextLogAt: 0, notLogged: 0 };
    } else this.kept.delete(key); // re-inserted below: the map's order is least recently refused first
    this.kept.set(key, kept);
    const refusal: Refusal = {
      at: new Date(call.now).toISOString(),
      systemUser,
      operation: call.operation,
      answer: typeof answer === 'string' ? answer : String(answer),
      reason,
      address: call.clientAddress(),
    };
    kept.refusals.push({ seq: this.seq++, refusal });
    if (kept.refusals.length > this.perSystemUser) kept.refusals.shift();
    this.log(kept, refusal, call.now);
  }

  /** The latest refusals, newest first: of one SystemUser (null: those naming none), or of all. */
  recent(systemUser?: string | null, limit = 100): Refusal[] {
    const lists = systemUser === undefined ? [...this.kept.values()] : [this.kept.get(systemUser ?? NOBODY)].filter((k) => k !== undefined);
    return lists
      .flatMap((k) => k.refusals)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit)
      .map((r) => r.refusal);
  }

  /** Refusals held now. */
  get size(): number {
    let n = 0;
    for (const k of this.kept.values()) n += k.refusals.length;
    return n;
  }

  private log(kept: Kept, refusal: Refusal, now: number): void {
    const logger = this.options.logger;
    if (logger === undefined) return;
    if (now < kept.nextLogAt) {
      kept.notLogged++;
      return;
    }
    if (now >= this.interval.start + this.logEveryMs) {
      if (this.interval.unlogged > 0) {
        logger.warn({ refusedUnlogged: this.interval.unlogged }, `${this.interval.unlogged} refusals of SystemUsers not logged in the last interval (over ${this.linesPerInterval} lines); GET /admin/refusals has the latest`);
      }
      this.interval = { start: now, lines: 0, unlogged: 0 };
    }
    if (this.interval.lines >= this.linesPerInterval) {
      this.interval.unlogged++;
      return;
    }
    this.interval.lines++;
    const more = kept.notLogged;
    kept.nextLogAt = now + this.logEveryMs;
    kept.notLogged = 0;
    logger.info(
      { ...refusal, ...(more > 0 ? { refusedMeanwhile: more } : {}) },
      `refused ${refusal.operation} of ${refusal.systemUser ?? '(no SystemUser)'}: ${refusal.answer}, ${refusal.reason}${more > 0 ? ` (and ${more} more since the last line)` : ''}`,
    );
  }
}

/** Newest first, across the lists of several threads, each already newest first (ISO times sort as text; a stable sort keeps each list's order within a millisecond). */
export function newestFirst(refusals: readonly Refusal[]): Refusal[] {
  return [...refusals].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}
