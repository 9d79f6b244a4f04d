import { BackendUnavailableError } from '../types.js';

/**
 * Errors of the scale-out event ids (shared/backends/ids/allocator.ts). Both are "unavailable" to the
 * operation layer (the event is answered -5); the event log tells them apart from Kafka or Redis
 * failures.
 */

/**
 * No id can be issued right now: the id-blocks topic is being checked against the stored ids (at
 * start, or after it was deleted and created again).
 */
export class IdBlocksUnavailableError extends BackendUnavailableError {
  override readonly name = 'IdBlocksUnavailableError';
}

/**
 * Another gateway takes blocks of another size from the same topic: their ids would overlap, so this
 * gateway issues none until it is restarted with the same configuration.
 */
export class IdBlocksConflictError extends BackendUnavailableError {
  override readonly name = 'IdBlocksConflictError';
}
