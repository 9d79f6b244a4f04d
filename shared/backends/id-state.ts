import { BackendUnavailableError } from './types.js';

/**
 * Errors of the distributed id state (shared/backends/redis/ids.ts). Both are "unavailable" to the
 * operation layer (the event is answered -5); the event log tells them apart.
 */

/**
 * Redis no longer holds the event-id state (flushed, restarted without its data, evicted): no id is
 * issued until a gateway has restored the counter above every id ever issued.
 */
export class IdStateLostError extends BackendUnavailableError {
  override readonly name = 'IdStateLostError';
}

/**
 * The id state moved to a new epoch (restored after a loss, or ID_FLOOR raised): ids taken under the
 * old one were dropped unused; allocating again gives ids of the new epoch.
 */
export class IdEpochChangedError extends BackendUnavailableError {
  override readonly name = 'IdEpochChangedError';
  constructor(readonly epoch: string) {
    super(`The event-id state moved to epoch ${epoch}; ids taken under the previous one are not used.`);
  }
}
