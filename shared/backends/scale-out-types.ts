import type { EventInstant } from '../events/instant.js';
import type { Deadline } from '../util/deadline.js';
import { BackendUnavailableError } from './types.js';

/*
 * The seams between the parts of the scale-out mode (Redis / Kafka / ClickHouse), below all of
 * them so that each imports only this: the Kafka event log takes ids and dedupe claims through
 * these interfaces, whatever implements them (ids/, redis/); the worker records last reports
 * through one. The embedded mode does all of this inside its SQLite event log.
 */
/**
 * Event ids from one sequence shared by every gateway: blocks named by Kafka offsets (ids/allocator.ts).
 * `allocate` rejects with the two errors below while it cannot issue ids.
 */
export interface IdAllocator {
  /** `count` fresh ids, unique across all gateways, increasing within this allocator. */
  allocate(count: number): Promise<bigint[]>;
}

/**
 * No id can be issued right now: the id-blocks topic is being checked against the stored ids (at
 * start, or after it was deleted and created again). Unavailable to the operation layer (the event
 * is answered -5); the event log tells it apart from Kafka or Redis failures.
 */
export class IdBlocksUnavailableError extends BackendUnavailableError {
  override readonly name = 'IdBlocksUnavailableError';
}

/**
 * Another gateway takes blocks of another size from the same topic: their ids would overlap, so this
 * gateway issues none until it is restarted with the same configuration (-5 meanwhile).
 */
export class IdBlocksConflictError extends BackendUnavailableError {
  override readonly name = 'IdBlocksConflictError';
}

/** The first id of each resent-event identity, remembered for a window, across gateways. */
export interface DedupeIndex {
  /**
   * Claims each key for its id unless already claimed inside the window. Returns, per entry,
   * null when the claim is new, or the id claimed earlier (the event is a resend).
   */
  claim(entries: readonly DedupeEntry[], windowMs: number, deadline?: Deadline): Promise<(bigint | null)[]>;
  /**
   * Forgets claims (operators' tool). The Kafka event log does not call it on a failed send: the
   * broker may still have written the event, so the claim is kept and a retry reuses the id.
   */
  release(entries: readonly Omit<DedupeEntry, 'id'>[]): Promise<void>;
}

/** One event's claim: its dedupe key (which already names the provider), its provider (where the claim is kept) and its id. */
export interface DedupeEntry {
  systemUser: string;
  key: string;
  id: bigint;
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
