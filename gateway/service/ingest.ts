import { ResultCode, type EventInput } from '../../shared/catalogue/index.js';
import { DeadlineTimer, type TimedWaiter } from '../../shared/util/async.js';
import type { Deadline } from '../../shared/util/deadline.js';
import type { AppendCompletion, AppendOutcome, Backends, EventRecord, Provider } from '../../shared/backends/types.js';
import type { Metrics } from '../../shared/runtime/metrics.js';
import { TokenBucketLimiter, type RateLimiter } from './rate-limit.js';
import { toEventRecord } from './event-record.js';
import { quoted, type RefusalLog, type RefusedCall } from './refusals.js';

/** Ids are 64-bit; clients get them folded into xs:int 1..2147483647. Never 0. */
export function foldId(id: bigint): number {
  return Number((id - 1n) % 2147483647n) + 1;
}

interface IngestOptions {
  timeZone: string;
  rateLimitEventsPerSecond: number;
  appendTimeoutMs: number;
  metrics?: Metrics;
  /** Where the buckets live; default one in this object (a single-threaded gateway). */
  rateLimiter?: RateLimiter;
  /** Where each refused event's reason goes (refusals.ts). */
  refusals?: RefusalLog;
}

/** The call an insert belongs to: whose, which operation, when, from where. */
export interface IngestCall extends RefusedCall {
  readonly provider: Provider;
  /** The request's deadline: what the calls before the append took, they leave it less of. */
  readonly deadline: Deadline;
}

/**
 * An insert's events from the call to their answers: each made a record or refused as invalid
 * (event-record.ts), the registered-vehicle check, the per-provider rate limit and the hand-off to
 * the event log. An event is answered with an id only once the log has made it durable; the log
 * also dedupes resent events.
 */
export class EventIngest {
  /** Null when RATE_LIMIT_EVENTS_PER_SECOND is 0 (off). */
  private readonly limiter: RateLimiter | null;
  /** Each insert's deadline (its request's: APPEND_TIMEOUT_MS from its start), one timer for all of them. */
  private readonly timeout: DeadlineTimer;

  constructor(
    private readonly backends: Pick<Backends, 'eventLog' | 'trips'>,
    private readonly options: IngestOptions,
  ) {
    this.limiter = options.rateLimitEventsPerSecond <= 0 ? null : (options.rateLimiter ?? new TokenBucketLimiter(options.rateLimitEventsPerSecond));
    this.timeout = new DeadlineTimer(options.appendTimeoutMs, 'event append');
  }

  /**
   * The code of each event: its id once durable, else why not. Synchronous until the append (and
   * the rate limit and registration checks when they need a store), so a plain insert costs one
   * promise chain, the append's. Answered by `deadline` (the request's: whatever the calls before
   * the append took, they leave the append only what is left of it).
   */
  insert(call: IngestCall, inputs: readonly EventInput[]): Promise<number[]> {
    return this.run(call, inputs, allCodes);
  }

  /** `insert` of one event, answered with its code. */
  insertOne(call: IngestCall, input: EventInput): Promise<number> {
    return this.run(call, [input], firstCode);
  }

  private run<R>(call: IngestCall, inputs: readonly EventInput[], pick: (codes: number[]) => R): Promise<R> {
    const { provider, operation, now } = call;
    const batch = this.validate(provider, inputs, operation, now);
    if (!provider.requireRegisteredVehicles) return this.limitAndAppend(call, batch, pick);
    return this.keepRegistered(provider.systemUser, batch, call.deadline).then(() => this.limitAndAppend(call, batch, pick));
  }

  /** Records for the valid events; the invalid ones answered -3, each with its reason. */
  private validate(provider: Provider, inputs: readonly EventInput[], operation: string, now: number): Batch {
    const zone = provider.timeZone ?? this.options.timeZone;
    if (inputs.length === 1) {
      // A plain insert: arrays of exactly one (pushing onto [] reserves room for 17).
      const record = toEventRecord(provider.systemUser, inputs[0]!, zone, operation, now);
      return typeof record === 'string'
        ? { codes: [ResultCode.InvalidEvent], accepted: [], positions: [], reasons: [record] }
        : { codes: [0], accepted: [record], positions: [0], reasons: null };
    }
    const batch: Batch = { codes: new Array<number>(inputs.length), accepted: [], positions: [], reasons: null };
    for (let i = 0; i < inputs.length; i++) {
      const record = toEventRecord(provider.systemUser, inputs[i]!, zone, operation, now);
      if (typeof record === 'string') refuse(batch, i, ResultCode.InvalidEvent, record);
      else {
        batch.accepted.push(record);
        batch.positions.push(i);
      }
    }
    return batch;
  }

  /** REQUIRE_REGISTERED_VEHICLES: events of vehicles on no trip are answered -4 and dropped. */
  private async keepRegistered(systemUser: string, batch: Batch, deadline: Deadline): Promise<void> {
    const accepted: EventRecord[] = [];
    const positions: number[] = [];
    for (let k = 0; k < batch.accepted.length; k++) {
      const record = batch.accepted[k]!;
      if (await this.backends.trips.isRegistered(systemUser, record.dominio, deadline)) {
        accepted.push(record);
        positions.push(batch.positions[k]!);
      } else refuse(batch, batch.positions[k]!, ResultCode.VehicleNotRegistered, `Dominio ${quoted(record.dominio)} is on no trip of this provider, which accepts registered vehicles only`);
    }
    batch.accepted = accepted;
    batch.positions = positions;
  }

  private limitAndAppend<R>(call: IngestCall, batch: Batch, pick: (codes: number[]) => R): Promise<R> {
    if (batch.accepted.length === 0 || this.limiter === null) return this.append(batch, call, pick);
    const systemUser = call.provider.systemUser;
    const rate = this.options.rateLimitEventsPerSecond;
    // The bucket is read once at `now`: the first `granted` events go ahead, the rest are over the rate.
    const granted = this.limiter.takeNow?.(systemUser, batch.accepted.length, call.now);
    if (granted !== undefined) return this.append(overRate(batch, granted, rate), call, pick);
    return this.limiter.take(systemUser, batch.accepted.length, call.now).then((g) => this.append(overRate(batch, g, rate), call, pick));
  }

  /**
   * Hands the accepted events to the log and answers once it has (or the deadline passed: a late
   * commit is harmless, the client's retry is deduplicated to the same id). One PendingInsert
   * is the call's log completion, timeout waiter and answer at once: the promise returned is the
   * only one the call makes, where a promise per stage (race, then, then) used to be.
   */
  private append<R>(batch: Batch, call: IngestCall, pick: (codes: number[]) => R): Promise<R> {
    if (batch.accepted.length === 0) return Promise.resolve(pick(this.answered(batch, call)));
    const deadline = call.deadline;
    return new Promise<R>((resolve, reject) => {
      const pending = new PendingInsert(batch, call, this.stored, pick, resolve, reject, this.timeout);
      this.timeout.trackUntil(pending, deadline);
      // No time left (the calls before took it all): answered -5 already, nothing to hand over.
      if (pending.settled) return;
      const log = this.backends.eventLog;
      if (log.appendWith !== undefined) log.appendWith(batch.accepted, pending, deadline);
      else log.append(batch.accepted, deadline).then((outcomes) => pending.appended(outcomes), (err: unknown) => pending.refused(err));
    });
  }

  /** The codes once the log answered: ids, or -5 for what it could not store (null: nothing, in time). Bound: every PendingInsert calls it. */
  private readonly stored = (batch: Batch, outcomes: AppendOutcome[] | null, started: number, call: IngestCall): number[] => {
    this.options.metrics?.publishSeconds.observe((performance.now() - started) / 1000);
    const { codes, positions } = batch;
    for (let k = 0; k < positions.length; k++) {
      const outcome = outcomes?.[k];
      if (outcome?.ok) codes[positions[k]!] = foldId(outcome.id);
      else {
        const why = outcomes === null ? `not stored within APPEND_TIMEOUT_MS (${this.options.appendTimeoutMs} ms), or the store refused it: the client retries` : 'the store could not commit it: the client retries';
        refuse(batch, positions[k]!, ResultCode.Unavailable, why);
      }
    }
    return this.answered(batch, call);
  };

  /** The codes as answered; each refused event's reason to the refusal log. */
  private answered(batch: Batch, call: IngestCall): number[] {
    this.options.metrics?.recordEventResults(call.operation, batch.codes);
    const reasons = batch.reasons;
    const log = this.options.refusals;
    if (reasons !== null && log !== undefined) {
      const several = batch.codes.length > 1;
      reasons.forEach((reason, i) => {
        if (reason !== undefined) log.record(call.provider.systemUser, call, batch.codes[i]!, several ? `event ${i + 1} of ${batch.codes.length}: ${reason}` : reason);
      });
    }
    return batch.codes;
  }

}

const allCodes = (codes: number[]): number[] => codes;
const firstCode = (codes: number[]): number => codes[0] ?? ResultCode.Unavailable;

const ANSWERED: Batch = Object.freeze({ codes: [], accepted: [], positions: [], reasons: null });

/** One insert waiting for the log: its completion, its timeout waiter and its answer in one object. */
class PendingInsert<R> implements AppendCompletion, TimedWaiter {
  deadline = 0;
  settled = false;
  private readonly started = performance.now();

  constructor(
    private batch: Batch,
    private readonly call: IngestCall,
    private readonly stored: (batch: Batch, outcomes: AppendOutcome[] | null, started: number, call: IngestCall) => number[],
    private readonly pick: (codes: number[]) => R,
    private readonly resolve: (answer: R) => void,
    private readonly reject: (err: unknown) => void,
    private readonly timeout: DeadlineTimer,
  ) {}

  appended(outcomes: AppendOutcome[]): void {
    if (this.timeout.settle(this)) this.answer(outcomes);
  }

  /** The log refused the call (an event it cannot hold): answered as unavailable, like a timeout. */
  refused(_error: unknown): void {
    if (this.timeout.settle(this)) this.answer(null);
  }

  expire(): void {
    this.answer(null);
  }

  private answer(outcomes: AppendOutcome[] | null): void {
    const batch = this.batch;
    // Answered once: whatever still holds this object (a queue slot, a group) holds no records.
    this.batch = ANSWERED;
    try {
      this.resolve(this.pick(this.stored(batch, outcomes, this.started, this.call)));
    } catch (err) {
      this.reject(err);
    }
  }
}

/** An insert's events on their way: each one's code, and the records still going ahead with their positions. */
interface Batch {
  readonly codes: number[];
  accepted: EventRecord[];
  positions: number[];
  /** Why each refused event was refused, by position; null while none was (the common case costs no array). */
  reasons: (string | undefined)[] | null;
}

/** The event at `position` is answered `code`, for `reason`. */
function refuse(batch: Batch, position: number, code: number, reason: string): void {
  batch.codes[position] = code;
  (batch.reasons ??= [])[position] = reason;
}

/** Past the first `granted` events the rest are answered -6 (over the provider's rate). */
function overRate(batch: Batch, granted: number, rate: number): Batch {
  for (const i of batch.positions.slice(granted)) refuse(batch, i, ResultCode.RateLimited, `over RATE_LIMIT_EVENTS_PER_SECOND (${rate} events a second for this provider)`);
  batch.accepted = batch.accepted.slice(0, granted);
  batch.positions = batch.positions.slice(0, granted);
  return batch;
}
