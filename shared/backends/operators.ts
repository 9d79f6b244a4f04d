import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/**
 * The admin API's own state (docs/admin-api.md §Identities and roles, §The audit trail): operators'
 * named tokens, the append-only audit trail of their calls, and the lockout of addresses that guess
 * tokens. Each store has an embedded implementation (SQLite + memory, embedded/) and a scale-out one
 * (Redis, redis/), held to one contract (test/helpers/store-contract-access.ts). Times are epoch
 * milliseconds passed in by the caller, as everywhere in shared/backends.
 */

/** What an identity may do; each role can do everything the ones before it can. */
export type Role = 'viewer' | 'operator' | 'admin';
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** True when `have` includes what `need` allows. */
export function roleAllows(have: Role, need: Role): boolean {
  return ROLES.indexOf(have) >= ROLES.indexOf(need);
}

/** A named operator token. The token itself is never stored: only its SHA-256. */
export interface OperatorToken {
  name: string;
  role: Role;
  /** Lowercase hex SHA-256 of the token text. */
  tokenHash: string;
  createdAt: number;
  /** The identity that created it. */
  createdBy: string;
  /** null = never expires. */
  expiresAt: number | null;
  lastUsedAt: number | null;
}

/** Tokens kept at most: the list stays small enough to answer in one piece. */
export const MAX_OPERATOR_TOKENS = 1000;
/**
 * `lastUsedAt` moves at most this often per token: a use is then a read, not a write, for all but
 * one request a minute (a console polls every few seconds).
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

export type TokenCreateOutcome = 'created' | 'exists' | 'full';

export interface OperatorTokenStore {
  /** `exists`: the name is taken; `full`: MAX_OPERATOR_TOKENS are stored. */
  create(token: OperatorToken): Promise<TokenCreateOutcome>;
  /**
   * The token whose hash this is, or null. When it is unexpired and its lastUsedAt is older than
   * LAST_USED_RESOLUTION_MS, lastUsedAt becomes `now` (the returned record shows it).
   */
  use(tokenHash: string, now: number): Promise<OperatorToken | null>;
  /** Every token, by name. */
  list(): Promise<OperatorToken[]>;
  /** Removes the token; false when there was none. Effective for the next request on every gateway. */
  revoke(name: string): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------
// The audit trail

/** ok: answered 2xx/3xx; failed: the call was let in but failed (4xx/5xx); refused: not let in (401/403/429). */
export type AuditOutcome = 'ok' | 'failed' | 'refused';

export type AuditDetail = Record<string, string | number | boolean | null>;

/** One admin call as the trail keeps it. Never a secret value: `changes` holds field names only. */
export interface AuditRecord {
  at: number;
  /** The token's name (`bootstrap` for ADMIN_TOKEN); null when no valid token was presented. */
  identity: string | null;
  role: Role | null;
  /** The client's address as the admin server saw it (the socket's peer). */
  address: string;
  method: string;
  /** The route as declared, e.g. `PATCH /admin/providers/:systemUser` (the path when none matched). */
  route: string;
  /** What the call was about: `provider/acme`, `provider/acme/command/17`, `token/ana` (see auditTarget). */
  target: string | null;
  status: number;
  outcome: AuditOutcome;
  /** Names of the fields the call sent (what it changed, or tried to). */
  changes: string[];
  /** Counts and facts of the outcome (an import's tallies, a deleted provider's ended sessions). */
  detail: AuditDetail | null;
  /** The X-Request-Id of the answer, also in the request's log line. */
  requestId: string;
}

export interface AuditEntry extends AuditRecord {
  /** Increasing with each append (across gateways in the scale-out mode). */
  id: number;
}

export interface AuditQuery {
  /** Entries at or after this time. */
  since?: number;
  identity?: string;
  /** A target and everything under it (`provider/acme` includes `provider/acme/command/17`). */
  target?: string;
  /** Entries with a lower id (exclusive): the next page of an earlier answer. */
  before?: number;
  limit: number;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** Where the next page starts (`before`), or null when nothing older is left. */
  nextBefore: number | null;
}

/** Entries kept at most whatever the retention: memory (Redis) and disk stay bounded under a flood of refused calls. */
export const AUDIT_MAX_ENTRIES = 200_000;
/** Entries one page request examines at most: a page may hold fewer than `limit` and still have a next one. */
export const AUDIT_SCAN_MAX = 1000;

export interface AuditStore {
  /** Appends one entry; there is no other way to change the trail but `expire`. */
  append(record: AuditRecord): Promise<AuditEntry>;
  /** Newest first. */
  page(query: AuditQuery): Promise<AuditPage>;
  /**
   * Drops at most `max` entries older than `olderThan` (retention), oldest first, and the oldest
   * beyond AUDIT_MAX_ENTRIES; how many went.
   */
  expire(olderThan: number, max: number): Promise<number>;
  /** Why entries could be lost if the store restarts (Redis without AOF), or null; absent where they cannot be. */
  durability?(): Promise<string | null>;
}

// ---------------------------------------------------------------------------------------------
// Token guesses

export interface GuessPolicy {
  /** Wrong tokens from one address inside the window that lock the address out. */
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

/** Wrong tokens counted per client address, like providers' failed logins. */
export interface AdminLockoutStore {
  /** The end of the lock on this address, else null. */
  lockedUntil(address: string, now: number): Promise<number | null>;
  /** Counts one wrong token; the end of the lock now in force for the address, else null. */
  recordFailure(address: string, now: number, policy: GuessPolicy): Promise<number | null>;
}

/** The three stores together, one per deployment mode. */
export interface OperatorStores {
  tokens: OperatorTokenStore;
  audit: AuditStore;
  lockouts: AdminLockoutStore;
}

// ---------------------------------------------------------------------------------------------
// Targets and the page scan both implementations share

/** `provider/acme/command/17` from ['provider', 'acme', 'command', '17']: each part percent-encoded, so a '/' in a name stays inside its part. */
export function auditTarget(...parts: string[]): string {
  return parts.map(encodeURIComponent).join('/');
}

/** The target's first two parts (`provider/acme`): what a target filter of two parts selects on. */
export function auditScope(target: string): string {
  return target.split('/').slice(0, 2).join('/');
}

/** True when `target` is `filter` or under it. */
function targetMatches(target: string | null, filter: string): boolean {
  return target !== null && (target === filter || target.startsWith(`${filter}/`));
}

/** Which of a store's orderings a query reads: by identity, by scope, or all entries. */
export type AuditIndex = { kind: 'all' } | { kind: 'identity'; identity: string } | { kind: 'scope'; scope: string };

/**
 * Reads `index` newest first: at most `chunk` entries with ids below `before` (null = from the
 * newest), in descending id order; an empty answer only when nothing older is left.
 */
type AuditReader = (index: AuditIndex, before: number | null, chunk: number) => Promise<AuditEntry[]>;

/**
 * Entries clocks disagree by at most this: in the scale-out mode ids follow Redis' order and
 * times each gateway's clock, so the scan goes this far past `since` before it stops.
 */
const CLOCK_SLACK_MS = 60_000;
/** Entries read at once: about a millisecond of the main thread in SQLite, with a turn of the event loop between. */
const CHUNK = 100;

/**
 * One page of a query over an index, examining at most AUDIT_SCAN_MAX entries: the identity
 * index when an identity is asked for, else the scope index when a target is, the others checked
 * entry by entry. Ids ascend with time (give or take CLOCK_SLACK_MS), so `since` ends the scan.
 */
export async function scanAuditPage(query: AuditQuery, read: AuditReader): Promise<AuditPage> {
  const index: AuditIndex =
    query.identity !== undefined
      ? { kind: 'identity', identity: query.identity }
      : query.target !== undefined
        ? { kind: 'scope', scope: auditScope(query.target) }
        : { kind: 'all' };
  const entries: AuditEntry[] = [];
  let before = query.before ?? null;
  let examined = 0;
  for (let first = true; ; first = false) {
    if (!first) await yieldToEventLoop();
    const chunk = await read(index, before, Math.min(CHUNK, AUDIT_SCAN_MAX - examined));
    for (const e of chunk) {
      examined++;
      before = e.id;
      if (query.since !== undefined && e.at < query.since - CLOCK_SLACK_MS) return { entries, nextBefore: null };
      if (query.since !== undefined && e.at < query.since) continue;
      if (query.identity !== undefined && e.identity !== query.identity) continue;
      if (query.target !== undefined && !targetMatches(e.target, query.target)) continue;
      entries.push(e);
      if (entries.length === query.limit) return { entries, nextBefore: e.id > 1 ? e.id : null };
    }
    if (chunk.length === 0) return { entries, nextBefore: null };
    if (examined >= AUDIT_SCAN_MAX) return { entries, nextBefore: before };
  }
}
