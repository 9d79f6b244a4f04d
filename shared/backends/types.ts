/**
 * A backend (Redis, Kafka, ClickHouse, the local store) cannot be reached right now. The operation
 * layer answers it as "retry later": -5 for inserts, a Server fault saying so for the rest.
 */
export class BackendUnavailableError extends Error {}

/**
 * The seams between the operation layer and storage. Each interface has an embedded
 * implementation (SQLite + memory, `embedded/`) and a distributed one (Redis/Kafka/ClickHouse).
 * Everything is async so both fit; times are epoch milliseconds passed in by the caller, so
 * tests control the clock.
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
  get(systemUser: string): Promise<Provider | null>;
  update(systemUser: string, patch: ProviderPatch, now: number): Promise<Provider | null>;
  list(): Promise<Provider[]>;
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
  /** When the SystemUser is locked for this address (its own lock or the SystemUser-wide one): the end, else null. */
  lockedUntil(systemUser: string, address: string, now: number): Promise<number | null>;
  /** Counts one failure and applies the policy; the lock now in force for that address (the SystemUser-wide one first), else null. */
  recordFailure(systemUser: string, address: string, now: number, policy: LockoutPolicy): Promise<Lockout | null>;
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
  /** Stores a new session under a fresh id. */
  create(id: string, systemUser: string, now: number, ttlMs: number): Promise<Session>;
  /** Returns the live session and slides its expiry; null when unknown or expired. */
  touch(id: string, now: number, ttlMs: number): Promise<Session | null>;
  /** True when a live session was removed. */
  destroy(id: string, now: number): Promise<boolean>;
}

export type CommandState = 'pending' | 'in_process' | 'succeeded' | 'failed' | 'expired';

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

export interface CommandStore {
  enqueue(command: NewCommand): Promise<Command>;
  /** The oldest unfinished, unexpired command; counts and times this delivery. */
  deliverNext(systemUser: string, now: number): Promise<Command | null>;
  /** Appends MSG and marks it in process; false unless it exists, is the provider's and unfinished. */
  appendStatus(systemUser: string, numero: number, message: string, now: number): Promise<boolean>;
  /** Finishes as succeeded/failed; 'already-same' for a retried call with the same outcome. */
  finish(systemUser: string, numero: number, succeeded: boolean, now: number): Promise<FinishOutcome>;
  list(systemUser: string, now: number): Promise<Command[]>;
}

export interface TripVehicle {
  dominio: string;
  nroSerie: string;
  registeredAt: number;
  /** FechaHoraEvento of the latest event from this provider for this Dominio, as resolved. */
  lastReport: EventInstant | null;
}

export interface TripStore {
  /** Registers (or re-registers, updating NroSerie) a vehicle on the provider's active trip. */
  addVehicle(systemUser: string, dominio: string, nroSerie: string, now: number): Promise<void>;
  removeVehicle(systemUser: string, dominio: string): Promise<boolean>;
  /** Sorted by Dominio. */
  listVehicles(systemUser: string): Promise<TripVehicle[]>;
  isRegistered(systemUser: string, dominio: string): Promise<boolean>;
}

/** An instant with .NET's 100 ns resolution: epoch milliseconds plus the ticks below them. */
export interface EventInstant {
  epochMs: number;
  /** 0..9999 */
  subMsTicks: number;
}

/** An accepted, validated event, ready to be stored. */
export interface EventRecord {
  systemUser: string;
  dominio: string;
  nroSerie: string;
  codigo: string;
  latitud: number;
  longitud: number;
  altitud: number;
  velocidad: number;
  rumbo: number | null;
  /** False when the coordinates are out of range (stored, flagged) or the device said so. */
  validPosition: boolean;
  /** Valido as sent by LoginYInsertarEvento2; null for the other operations. */
  valido: boolean | null;
  eventTimeText: string;
  eventTime: EventInstant;
  receptionTimeText: string | null;
  receptionTime: EventInstant | null;
  /** When the gateway received the request (epoch ms). */
  receivedAt: number;
  crudo: string | null;
  sensors: { clave: string; valor: string }[];
  operation: string;
  /** Identity of a resent event: same provider, vehicle, code, event time and position. */
  dedupeKey: string;
}

export type AppendOutcome =
  | { ok: true; id: bigint; duplicate: boolean }
  | { ok: false; reason: 'unavailable' };

/**
 * Where accepted events go. `append` resolves only once the events are durable (committed
 * locally, or acknowledged by the log with acks=all). It allocates ids and returns the first id
 * for an event whose dedupeKey was seen inside the dedupe window.
 */
export interface EventLog {
  append(events: EventRecord[]): Promise<AppendOutcome[]>;
  /** Flushes what is queued and stops accepting. */
  close(): Promise<void>;
}

export interface StoredEvent extends EventRecord {
  id: bigint;
  storedAt: number;
}

export interface EventQuery {
  provider?: string;
  dominio?: string;
  limit: number;
}

/** Read side of stored events (admin API, analysts' store). */
export interface EventStore {
  /** Latest first. */
  recent(query: EventQuery): Promise<StoredEvent[]>;
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
  /** True when every backend answers (readiness). */
  healthy(): Promise<boolean>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Seams of the distributed mode (Redis / Kafka / ClickHouse). The embedded mode does all of this
// inside its SQLite event log.

/** Event ids from one sequence shared by every gateway: blocks taken from one counter. */
export interface IdAllocator {
  /** `count` fresh ids, unique across all gateways, increasing within this allocator. */
  allocate(count: number): Promise<bigint[]>;
  /**
   * The id state (epoch) an array returned by allocate() was taken under, which the dedupe claim
   * checks in the same atomic step (so ids of a state that was lost are never published); undefined
   * for an allocator without such state.
   */
  epochOf?(ids: readonly bigint[]): string | undefined;
}

/** The first id of each resent-event identity, remembered for a window, across gateways. */
export interface DedupeIndex {
  /**
   * Claims each key for its id unless already claimed inside the window. Returns, per entry,
   * null when the claim is new, or the id claimed earlier (the event is a resend). With `epoch`,
   * claims nothing and rejects (IdStateLostError / IdEpochChangedError) unless the id state is
   * still that epoch.
   */
  claim(entries: readonly { key: string; id: bigint }[], windowMs: number, epoch?: string): Promise<(bigint | null)[]>;
  /**
   * Forgets claims (operators' tool). The Kafka event log does not call it on a failed send: the
   * broker may still have written the event, so the claim is kept and a retry reuses the id.
   */
  release(keys: readonly string[]): Promise<void>;
}

export interface LastReportUpdate {
  systemUser: string;
  dominio: string;
  at: EventInstant;
}

/** Where the worker records FechaUltimoReporte for ConsultarVehiculosEnViaje. */
export interface LastReportSink {
  /** Moves each provider+Dominio last report forward to `at` when later; never backwards. */
  record(updates: readonly LastReportUpdate[]): Promise<void>;
}
