import type { Refusals } from './types.js';

/**
 * The documented answers of refused calls (docs/protocol.md, "Result codes"), shared by the
 * operations that answer alike. Insert codes: -1 invalid credentials, -2 no session, -3 invalid.
 */
export const refusals = {
  /** Boolean operations answer false, whatever was refused. */
  boolean: { notAuthenticated: { value: false }, invalid: { value: false } },
  insertWithCredentials: { notAuthenticated: { value: -1 }, invalid: { value: -3 } },
  insertWithSession: { notAuthenticated: { value: -2 }, invalid: { value: -3 } },
  /** A batch answers item by item: -1 for each event, or -3 for each event over a limit. */
  batch: { notAuthenticated: { value: -1, eachOf: 'Eventos' }, invalid: { value: -3, eachOf: 'Eventos' } },
  /** Operations returning data have no value to say "refused" with: a Client fault says it. */
  faultWithCredentials: { notAuthenticated: { fault: 'invalidCredentials' } },
  faultWithSession: { notAuthenticated: { fault: 'noSession' } },
} as const satisfies Record<string, Refusals>;
