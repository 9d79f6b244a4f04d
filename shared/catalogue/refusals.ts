import { ResultCode } from './result-codes.js';
import { isArrayParam, type Answer, type OperationDef, type Refusals } from './types.js';

const { InvalidCredentials, NoSession, InvalidEvent, Unavailable } = ResultCode;

/**
 * The documented answers of refused calls (docs/protocol.md, "Result codes"), shared by the
 * operations that answer alike.
 */
export const refusals = {
  /** Boolean operations answer false, whatever was refused. */
  boolean: { notAuthenticated: { value: false }, invalid: { value: false } },
  insertWithCredentials: { notAuthenticated: { value: InvalidCredentials }, invalid: { value: InvalidEvent } },
  insertWithSession: { notAuthenticated: { value: NoSession }, invalid: { value: InvalidEvent } },
  /** A batch answers item by item: -1 for each event, or -3 for each event over a limit. */
  batch: { notAuthenticated: { value: InvalidCredentials, eachOf: 'Eventos' }, invalid: { value: InvalidEvent, eachOf: 'Eventos' } },
  /** Operations returning data have no value to say "refused" with: a Client fault says it. */
  faultWithCredentials: { notAuthenticated: { fault: 'invalidCredentials' } },
  faultWithSession: { notAuthenticated: { fault: 'noSession' } },
} as const satisfies Record<string, Refusals>;

/**
 * The one place "retry later" is decided for a whole call (a backend that cannot be reached):
 * -5 where the result is a code (for each item of a batch), else the `unavailable` fault.
 */
export function retryLater(op: OperationDef): Answer {
  if (op.result.name === 'int') return { value: Unavailable };
  const batch = op.params.find((p) => isArrayParam(p) && p.perItem === true);
  if (op.result.name === 'ArrayOfInt' && batch !== undefined) return { value: Unavailable, eachOf: batch.name };
  return { fault: 'unavailable' };
}
