import type { CommandStore, EventLog, LockoutStore, ProviderStore, SessionStore, TripStore } from '../../shared/backends/types.js';
import type { RateLimiter } from '../service/rate-limit.js';
import type { RpcClient } from './rpc.js';

/**
 * What a front-end thread reaches on the main thread: the state every thread of a gateway must
 * agree on (sessions, lockouts, rate buckets, the event log with its ids, dedupe and single
 * committer) and the stores behind the main thread's SQLite connection or Redis/Kafka clients.
 * The interfaces are the backends' own (shared/backends/types.ts), so the operation layer runs
 * unchanged on either side.
 */
export interface SharedState {
  providers: ProviderStore;
  lockouts: LockoutStore;
  sessions: SessionStore;
  commands: CommandStore;
  trips: TripStore;
  eventLog: Pick<EventLog, 'append'>;
  rateLimiter: RateLimiter;
}

// `-?`: an optional synchronous shortcut (peek, lockedUntilNow, takeNow) is not a method a thread calls remotely.
type MethodsOf<T> = { [K in keyof T]-?: T[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof T];

const METHODS = {
  providers: ['create', 'get', 'update', 'list', 'delete'],
  lockouts: ['lockedUntil', 'recordFailure', 'clear', 'list'],
  sessions: ['create', 'touch', 'destroy', 'endAll'],
  commands: ['enqueue', 'deliverNext', 'appendStatus', 'finish', 'list', 'get', 'cancel', 'cancelAll', 'page'],
  trips: ['addVehicle', 'removeVehicle', 'listVehicles', 'isRegistered', 'clear', 'pageVehicles', 'getVehicle'],
  eventLog: ['append'],
  rateLimiter: ['take'],
} as const satisfies { [K in keyof SharedState]: readonly MethodsOf<SharedState[K]>[] };

/** Compiles only while every method of every interface above is in METHODS. */
type Unlisted = { [K in keyof SharedState]: Exclude<MethodsOf<SharedState[K]>, (typeof METHODS)[K][number]> }[keyof SharedState];
export const EVERY_METHOD_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;

type Target = keyof SharedState;
type AnyMethod = (...args: unknown[]) => Promise<unknown>;

/** Operation numbers on the wire: the position of each target.method in METHODS. */
const OPS: readonly (readonly [Target, string])[] = (Object.keys(METHODS) as Target[]).flatMap((target) =>
  METHODS[target].map((method) => [target, method] as const),
);

/**
 * Arguments that cannot cross a thread as they are: lockedUntil's lazy client address (a function)
 * is read on the front end and sent as text. The main thread turns it back into a function. (A
 * request's deadline crosses as it is: shared/util/deadline.ts makes it mean the same instant on
 * every thread.)
 */
const MARSHAL: Partial<Record<string, { send(args: unknown[]): unknown[]; receive(args: unknown[]): unknown[] }>> = {
  'lockouts.lockedUntil': {
    send: ([systemUser, address, now, deadline]) => [systemUser, (address as () => string)(), now, deadline],
    receive: ([systemUser, address, now, deadline]) => [systemUser, () => address, now, deadline],
  },
};

/** A front end's view of the shared state: every method is a call to the main thread. */
export function remoteState(rpc: RpcClient): SharedState {
  const state: Partial<Record<Target, Record<string, AnyMethod>>> = {};
  OPS.forEach(([target, method], op) => {
    const marshal = MARSHAL[`${target}.${method}`];
    (state[target] ??= {})[method] = marshal === undefined ? (...args: unknown[]) => rpc.call(op, args) : (...args: unknown[]) => rpc.call(op, marshal.send(args));
  });
  // Built from METHODS, which the types above hold complete for each interface.
  return state as unknown as SharedState;
}

/** The main thread's side: one handler per operation number, calling the real object. */
export function stateHandlers(state: SharedState): ((args: unknown[]) => Promise<unknown>)[] {
  return OPS.map(([target, method]) => {
    const object = state[target] as unknown as Record<string, AnyMethod>;
    const marshal = MARSHAL[`${target}.${method}`];
    return (args: unknown[]) => {
      const fn = object[method];
      if (fn === undefined) return Promise.reject(new Error(`${target}.${method} is missing.`));
      return fn.apply(object, marshal === undefined ? args : marshal.receive(args));
    };
  });
}
