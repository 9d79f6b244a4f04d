import type { WatchedComponent } from '../runtime/stuck-watchdog.js';
import type { EventInstant } from '../events/instant.js';
import type { EventRecord } from '../events/schema.js';
import type { OperatorStores } from './operators.js';
import type { Deadline } from '../util/deadline.js';

/**
 * A backend (Redis, Kafka, ClickHouse, the local store) cannot be reached right now. The operation
 * layer answers it as "retry later": -5 for inserts, a Server fault saying so for the rest.
 */
export class BackendUnavailableError extends Error {}

/**
 * The seams between the operation layer and storage. Each interface has an embedded
 * implementation (SQLite + memory, `embedded/`) and a scale-out one (Redis/Kafka/ClickHouse).
 * Everything is async so both fit; times are epoch milliseconds passed in by the caller, so
 * tests control the clock. The calls a request makes on its way to an answer take its `deadline`
 * (shared/util/deadline.ts): a store that waits on a server gives up when it passes (failing as
 * unavailable) and sends nothing once it has; one that answers from memory ignores it.
 *
 * Synchronous twins (`peek` of `get`, `lockedUntilNow` of `lockedUntil`, `touchNow` of `touch`,
 * `appendWith` of `append`; `takeNow` of a RateLimiter's `take`) follow one rule: a twin is offered
 * only by a store that holds the answer in this thread's memory; when it answers, it answers what
 * its async form would at that moment (with the same effects: `touchNow` slides the expiry as
 * `touch` does); `peek` may answer `undefined`, "not in memory, ask `get`". Callers use a twin when
 * present and fall back to the async form; a front-end thread's proxies of the main thread's stores
 * never offer one. The store contract test (test/helpers/store-contract.ts) holds each twin to its
 * async form.
 */

export interface Provider {
  systemUser: string;
  /** `scrypt$N$r$p$salt$hash` (see shared/domain/passwords.ts). */
  passwordHash: string;
  enabled: boolean;
  /** IANA zone for this provider's dateTimes without offset; null = the service's TIME_ZONE. */
  timeZone: string | null;
  /** When true, events for vehicles not registered to the provider get -4. */
  requireRegisteredVehicles: boolean;
  createdAt: number;
  updatedAt: number;
}

export type ProviderPatch = Partial<Pick<Provider, 'passwordHash' | 'enabled' | 'timeZone' | 'requireRegisteredVehicles'>>;

export interface ProviderStore {
  /** Returns null when a provider with that SystemUser already exists. */
  create(provider: Provider): Promise<Provider | null>;
  get(systemUser: string, deadline?: Deadline): Promise<Provider | null>;
  /** `get` answered from memory when this store holds the answer (a cache hit), else undefined. */
  peek?(systemUser: string): Provider | null | undefined;
  update(systemUser: string, patch: ProviderPatch, now: number): Promise<Provider | null>;
  list(): Promise<Provider[]>;
  /** Removes the provider record; false when there was none. Its other state is the caller's to end. */
  delete(systemUser: string): Promise<boolean>;
}

/**
 * When failed logins lock (docs/protocol.md, "Lockout"). Failures count per SystemUser and client
 * address, so a stranger guessing a provider's password locks out only his own address; past a
 * much higher count from all addresses together the SystemUser is locked everywhere (a real,
 * distributed attack).
 */
export interface LockoutPolicy {
  /** Failures of one SystemUser from one address inside the window that lock that address out. */
  maxFailures: number;
  /** Failures of one SystemUser from all addresses inside the window that lock it everywhere. */
  userMaxFailures: number;
  windowMs: number;
  lockMs: number;
}

/** A lock in force: `address` null means every address (the SystemUser-wide ceiling). */
export interface Lockout {
  systemUser: string;
  address: string | null;
  until: number;
}

/** Failed-login bookkeeping of known SystemUsers; the policy is passed in by the domain. */
export interface LockoutStore {
  /**
   * When the SystemUser is locked for this address (its own lock or the SystemUser-wide one): the
   * end, else null. The address is asked for only when needed: reading it costs a system call, and
   * most logins are of SystemUsers with no failures at all.
   */
  lockedUntil(systemUser: string, address: () => string, now: number, deadline?: Deadline): Promise<number | null>;
  /** `lockedUntil` answered at once, for stores that keep locks in this thread; absent otherwise. */
  lockedUntilNow?(systemUser: string, address: () => string, now: number): number | null;
  /** Counts one failure and applies the policy; the lock now in force for that address (the SystemUser-wide one first), else null. */
  recordFailure(systemUser: string, address: string, now: number, policy: LockoutPolicy, deadline?: Deadline): Promise<Lockout | null>;
  /** Lifts every lock of the SystemUser and forgets its failures (operators, a password reset). */
  clear(systemUser: string): Promise<void>;
  /** Locks in force, soonest ending first (operators' view). */
  list(now: number): Promise<Lockout[]>;
}

export interface Session {
  id: string;
  systemUser: string;
  expiresAt: number;
}

export interface SessionStore {
  /**
   * Stores a new session under a fresh id: `id`, or `id` with a stamp of the store's in its last
   * characters (the Redis store's hash slot, shared/domain/session-ids.ts). The id to hand out is
   * the one answered.
   */
  create(id: string, systemUser: string, now: number, ttlMs: number): Promise<Session>;
  /**
   * Returns the live session and slides its expiry; null when unknown or expired. A store may leave
   * an expiry that a slide would move by less than a twentieth of the time to live, at most 10 s,
   * as it is (the Redis store: one read instead of a write per request).
   */
  touch(id: string, now: number, ttlMs: number, deadline?: Deadline): Promise<Session | null>;
  /** `touch` answered at once, for stores that keep sessions in this thread; absent otherwise. */
  touchNow?(id: string, now: number, ttlMs: number): Session | null;
  /** True when a live session was removed. */
  destroy(id: string, now: number): Promise<boolean>;
  /** Ends every session of the SystemUser (a deleted provider); how many were live. */
  endAll(systemUser: string, now: number): Promise<number>;
}

/** `cancelled`: an operator withdrew it before it finished; it is never handed out again. */
export type CommandState = 'pending' | 'in_process' | 'succeeded' | 'failed' | 'expired' | 'cancelled';

export interface CommandHistoryEntry {
  at: number;
  kind: 'queued' | 'delivered' | 'status' | 'finished';
  message: string;
}

export interface Command {
  numero: number;
  systemUser: string;
  cmd: string;
  unidad: string;
  equipo: string;
  state: CommandState;
  createdAt: number;
  expiresAt: number;
  deliveries: number;
  lastDeliveredAt: number | null;
  finishedAt: number | null;
  history: CommandHistoryEntry[];
}

export interface NewCommand {
  systemUser: string;
  cmd: string;
  unidad: string;
  equipo: string;
  now: number;
  expiresAt: number;
}

export type FinishOutcome = 'finished' | 'already-same' | 'rejected';

/** `cancelled`: it was unfinished and is now cancelled; `not-open`: it had already finished, expired or been cancelled. */
export type CancelOutcome = { outcome: 'cancelled' | 'not-open'; command: Command };

/** One page of commands across providers, newest first. */
export interface CommandPageQuery {
  systemUser?: string;
  /** The state as reported (an unfinished command past its expiry is `expired`). */
  state?: CommandState;
  /** Only commands with a lower NUMERO (exclusive). */
  beforeNumero?: number;
  limit: number;
}

export interface CommandPage {
  commands: Command[];
  /** Where the next page starts (beforeNumero), or null when nothing older is left. */
  nextBeforeNumero: number | null;
}

export interface CommandStore {
  enqueue(command: NewCommand): Promise<Command>;
  /** The oldest unfinished, unexpired command; counts and times this delivery. */
  deliverNext(systemUser: string, now: number): Promise<Command | null>;
  /** Appends MSG and marks it in process; false unless it exists, is the provider's and unfinished. */
  appendStatus(systemUser: string, numero: number, message: string, now: number): Promise<boolean>;
  /** Finishes as succeeded/failed; 'already-same' for a retried call with the same outcome. */
  finish(systemUser: string, numero: number, succeeded: boolean, now: number): Promise<FinishOutcome>;
  list(systemUser: string, now: number): Promise<Command[]>;
  /** One command of the provider, or null (unknown, or another provider's). */
  get(systemUser: string, numero: number, now: number): Promise<Command | null>;
  /**
   * Cancels an unfinished command atomically with respect to every other command operation: once
   * cancelled it is never delivered, and status or finish calls on it are refused. Null when the
   * provider has no such command.
   */
  cancel(systemUser: string, numero: number, now: number): Promise<CancelOutcome | null>;
  /** Cancels every unfinished command of the provider (a deleted provider); how many. */
  cancelAll(systemUser: string, now: number): Promise<number>;
  /** Commands newest first, across providers unless one is given. A page may hold fewer than `limit` and still have a next one. */
  page(query: CommandPageQuery, now: number): Promise<CommandPage>;
}

export interface TripVehicle {
  dominio: string;
  nroSerie: string;
  registeredAt: number;
  /** FechaHoraEvento of the latest event from this provider for this Dominio, as resolved. */
  lastReport: EventInstant | null;
}

export interface VehiclePageQuery {
  afterDominio?: string;
  limit: number;
}

export interface TripStore {
  /** Registers (or re-registers, updating NroSerie) a vehicle on the provider's active trip. */
  addVehicle(systemUser: string, dominio: string, nroSerie: string, now: number): Promise<void>;
  removeVehicle(systemUser: string, dominio: string): Promise<boolean>;
  /** Sorted by Dominio (ordinal, UTF-16 code units): the whole trip, for ConsultarVehiculosEnViaje. */
  listVehicles(systemUser: string): Promise<TripVehicle[]>;
  /**
   * One page of the trip for the operators, in code point order of Dominio (UTF-8 bytes, which the
   * stores index): the vehicles after `afterDominio` (exclusive), at most `limit`.
   */
  pageVehicles(systemUser: string, page: VehiclePageQuery): Promise<TripVehicle[]>;
  /** One vehicle of the trip, or null. */
  getVehicle(systemUser: string, dominio: string): Promise<TripVehicle | null>;
  isRegistered(systemUser: string, dominio: string, deadline?: Deadline): Promise<boolean>;
  /** Removes every vehicle from the provider's trip (a deleted provider); how many. */
  clear(systemUser: string): Promise<number>;
}

/** An accepted, validated event, ready to be stored: declared field by field in shared/events/schema.ts. */
export type { EventInstant, EventRecord };

export type AppendOutcome =
  | { ok: true; id: bigint; duplicate: boolean }
  | { ok: false; reason: 'unavailable' };

/**
 * Where accepted events go. `append` resolves only once the events are durable (committed
 * locally, or acknowledged by the log with acks=all). It allocates ids and returns the first id
 * for an event whose dedupeKey was seen inside the dedupe window.
 */
export interface EventLog {
  /** `deadline`: answer by then (its events unavailable if not stored by then); default the log's own APPEND_TIMEOUT_MS. */
  append(events: EventRecord[], deadline?: Deadline): Promise<AppendOutcome[]>;
  /**
   * `append` answering through `completion` instead of a promise (a log that has it spares every
   * insert its promise chain): exactly one of its methods is called once, possibly before this
   * returns. A rejection of `append` is `refused` here.
   */
  appendWith?(events: EventRecord[], completion: AppendCompletion, deadline?: Deadline): void;
  /** Flushes what is queued and stops accepting. */
  close(): Promise<void>;
}

/** Where `appendWith` answers. Its methods must not throw: the log calls them from its commit. */
export interface AppendCompletion {
  appended(outcomes: AppendOutcome[]): void;
  refused(error: unknown): void;
}

export interface StoredEvent extends EventRecord {
  id: bigint;
  storedAt: number;
}

export interface EventQuery {
  provider?: string;
  dominio?: string;
  limit: number;
  /** Only ids below this one (exclusive): the next page of an earlier answer. */
  beforeId?: bigint;
}

/** Arrivals are counted in buckets of 10 s (operators' overview)... */
export const ACTIVITY_BUCKET_MS = 10_000;
/** ...over the last 15 minutes at most. */
export const ACTIVITY_WINDOW_MS = 15 * 60_000;

/** Arrivals since a moment, for the operators' overview. */
export interface EventActivity {
  /** Events received per bucket: `at` is the bucket's start (epoch ms, a multiple of the bucket size). */
  buckets: { at: number; events: number }[];
  /** Per provider with events: how many arrived since then, and when its latest event arrived (possibly earlier). */
  providers: { systemUser: string; events: number; lastEventAt: number | null }[];
}

/** Read side of stored events (admin API, analysts' store). */
export interface EventStore {
  /** Latest first. */
  recent(query: EventQuery): Promise<StoredEvent[]>;
  /** Events received since `since` (at most ACTIVITY_WINDOW_MS ago), per ACTIVITY_BUCKET_MS bucket and per provider. */
  activity(since: number): Promise<EventActivity>;
}

/** Newly stored events as they are stored: the operators' live view. */
export interface EventFeed {
  /**
   * Calls `listener` with every event stored after the returned promise resolved (and possibly
   * some stored shortly before), until the subscription is closed.
   */
  subscribe(listener: (event: StoredEvent) => void): Promise<FeedSubscription>;
}

export interface FeedSubscription {
  close(): Promise<void>;
}

/** A message the worker could not load, set aside with its reason (scale-out). */
export interface PoisonMessage {
  /** `partition-offset` on the topic it came from. */
  id: string;
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  reason: string;
  /** When it was set aside (epoch ms). */
  at: number;
  /** The message value as received (possibly cut, see `truncated`). */
  value: Buffer;
  /** True when the value was too large to keep whole: such a message cannot be re-driven. */
  truncated: boolean;
}

export interface PoisonStore {
  /** Newest first. */
  list(limit: number): Promise<PoisonMessage[]>;
  count(): Promise<number>;
  get(id: string): Promise<PoisonMessage | null>;
  /** Sets messages aside; the same id again replaces it (a re-read after a crash). */
  add(messages: readonly PoisonMessage[]): Promise<void>;
  /** False when there was no such message. */
  remove(id: string): Promise<boolean>;
  /** Puts the message back on its topic with its key, then removes it; false when there was none. */
  redrive(id: string): Promise<boolean>;
}

/** What the operators' overview shows of the backends. */
export interface BackendStatus {
  checks: { name: string; ok: boolean; detail?: string }[];
  /** Scale-out: messages the worker group has not committed yet, over all partitions; null when unknown or embedded. */
  workerLag: number | null;
}

/** Everything the operation layer needs; one object per deployment mode. */
export interface Backends {
  providers: ProviderStore;
  lockouts: LockoutStore;
  sessions: SessionStore;
  commands: CommandStore;
  trips: TripStore;
  eventLog: EventLog;
  events: EventStore;
  /** Newly stored events (embedded: this process's commits; scale-out: the Kafka topic). */
  feed: EventFeed;
  /** Messages the worker set aside (scale-out); null in the embedded mode, which has none. */
  poison: PoisonStore | null;
  /** The admin API's operator tokens, audit trail and token-guess lockouts (operators.ts). */
  operators: OperatorStores;
  /** True when every backend answers (readiness). */
  healthy(): Promise<boolean>;
  /** Each backend's state and the worker's lag (operators' overview). */
  status(): Promise<BackendStatus>;
  /** The clients the stuck watchdog watches (shared/runtime/stuck-watchdog.ts): scale-out only. */
  watched?: readonly WatchedComponent[];
  close(): Promise<void>;
}
