import type { AppendCompletion, AppendOutcome, EventLog, EventRecord } from '../types.js';
import { DedupeRing } from './dedupe-ring.js';
import { EVENT_ROWS } from './event-row.js';
import type { SqliteDatabase } from './database.js';
import type { StoreAccess } from './store-access.js';
import { noteReport, type LastReport } from './trips.js';
import { WriterThread, type GroupWriter, type LastReportRow } from './writer-thread.js';
import { inlineWriter, threadWriter } from './group-writers.js';
import { launchedWarm } from '../../runtime/warm-start.cjs';

/**
 * Events per transaction at most. A commit blocks the event loop for a time that grows with its
 * events (npm run bench:eventlog measures the cost per event), so this bounds the stall; larger
 * groups measured no faster (bench/embedded-eventlog.ts).
 */
const DEFAULT_MAX_GROUP_EVENTS = 1000;

/** About 50 bytes a key, outside the JS heap (dedupe-ring.ts): 1M keys ≈ 50 MB at most. */
const DEFAULT_MAX_DEDUPE_KEYS = 1_000_000;

const UNAVAILABLE: AppendOutcome = Object.freeze({ ok: false, reason: 'unavailable' });

interface EventLogOptions {
  dedupeWindowMs: number;
  now: () => number;
  maxGroupEvents?: number;
  /** Dedupe keys kept at most; past it the oldest are forgotten first, so memory stays bounded. */
  maxDedupeKeys?: number;
  /**
   * Commit on a dedicated writer thread (default), so fsync never blocks the event loop; false
   * commits inline on the caller's connection (simpler, for tools and comparisons).
   */
  offThread?: boolean;
  /** Durability of event commits on the writer thread (default: the connection's own setting). */
  synchronous?: 'FULL' | 'NORMAL';
  /** Told about every failed commit (its events were answered 'unavailable'). */
  onCommitError?: (error: unknown, events: number) => void;
  /** Serialises the main connection's writes with this log's commits (see store-access.ts). */
  access?: StoreAccess;
  /** Every id issued is greater than this (ID_FLOOR: ids continue above a legacy sequence). Default 0. */
  idFloor?: bigint;
  /** Bytes of the ring that hands groups to the writer thread (writer-ring.ts); tests make it small. */
  ringBytes?: number;
  /** Told each committed group (the live view of the admin API); must not throw. */
  onCommitted?: (events: readonly EventRecord[], ids: readonly bigint[], storedAt: number) => void;
}

/** Padding of the readiness probe row: enough fresh pages that a full disk refuses it, as it refuses a group. */
const PROBE_PAD_BYTES = 64 * 1024;

export interface EventLogStats {
  /** Transactions committed, each holding one group of events. */
  commits: number;
  failedCommits: number;
  /** Events stored (duplicates excluded). */
  events: number;
  /** Events answered as duplicates of an earlier one. */
  duplicates: number;
  /** Time spent inside commits (write + fsync), in ms; the event loop is blocked meanwhile. */
  commitMs: number;
  /** The longest single commit, in ms. */
  maxCommitMs: number;
  /** Dedupe keys held in memory. */
  dedupeKeys: number;
}

/** Events queued for one transaction. */
interface Group {
  events: EventRecord[];
  ids: bigint[];
  /** One-event `appendWith` calls this group decides, side by side: where to answer, with which id, duplicate or not. */
  completions: AppendCompletion[];
  completionIds: bigint[];
  completionDuplicates: boolean[];
  status: 'pending' | 'committed' | 'failed';
  done: Promise<void>;
  resolve: () => void;
}

interface Slot {
  id: bigint;
  duplicate: boolean;
  group: Group | null;
}

/** Answers the group's one-event `appendWith` calls with its fate. */
function answerCompletions(group: Group): void {
  const { completions, completionIds, completionDuplicates } = group;
  const committed = group.status === 'committed';
  for (let i = 0; i < completions.length; i++) {
    completions[i]!.appended(committed ? [{ ok: true, id: completionIds[i]!, duplicate: completionDuplicates[i]! }] : [UNAVAILABLE]);
  }
  // A completion reaches its whole call (records, request, answer): the group must not keep them.
  group.completions = [];
}

/**
 * The embedded event log: SQLite with group commit.
 *
 * Every event queued during one event-loop turn (from any number of requests) is written in one
 * transaction on the next setImmediate, so the fsync that synchronous=FULL pays per commit is
 * shared: throughput follows rows per transaction, not commits per second. `append` resolves only
 * after that commit.
 *
 * Ids are allocated here, in memory, from max(MAX(id), idFloor) + 1 at open: no round trip per event, strictly
 * increasing. This assumes one writing process per data directory, which is what embedded mode is.
 * Ids of a failed commit are never reused (they were never acknowledged), so gaps are possible.
 *
 * Dedupe is an in-memory index from dedupeKey to the first copy (a compact ring, see
 * dedupe-ring.ts), rebuilt at open from the last window of stored events, so a resend after a
 * restart still gets the first id.
 */
export class SqliteEventLog implements EventLog {
  private readonly groups: Group[] = [];
  /** Pending entries are tagged with the group that will store them. */
  private readonly dedupe: DedupeRing<Group>;
  private readonly writer: GroupWriter;
  /** The commit in flight: one at a time, so groups reach the disk in id order. */
  private committing: Promise<void> | null = null;
  private readonly maxGroupEvents: number;
  private nextId: bigint;
  private closed = false;
  private flushScheduled = false;
  /** The latest commit (event group or probe) failed: the store cannot write right now. */
  private lastCommitFailed = false;
  private readonly counters = { commits: 0, failedCommits: 0, events: 0, duplicates: 0, commitMs: 0, maxCommitMs: 0 };

  constructor(
    private readonly db: SqliteDatabase,
    private readonly options: EventLogOptions,
  ) {
    this.maxGroupEvents = Math.max(1, options.maxGroupEvents ?? DEFAULT_MAX_GROUP_EVENTS);
    this.dedupe = new DedupeRing<Group>({ expectedKeys: options.maxDedupeKeys ?? DEFAULT_MAX_DEDUPE_KEYS });
    // A process launched for serving takes the index's memory at once: no page faults while it fills.
    if (launchedWarm()) this.dedupe.prefault();

    // safeIntegers: ids are 64-bit and must not pass through a double.
    const maxId = db.prepare<[], bigint | null>('SELECT MAX(id) FROM events').pluck().safeIntegers().get();
    const stored = maxId ?? 0n;
    const floor = options.idFloor ?? 0n;
    this.nextId = (stored > floor ? stored : floor) + 1n;
    this.rebuildDedupe(db);

    this.writer = options.offThread === false ? inlineWriter(db) : threadWriter(db, options.synchronous, options.ringBytes);
    // A process launched for serving starts its writer now: the first events do not wait for it.
    if (launchedWarm()) this.writer.open();
  }

  private rebuildDedupe(db: SqliteDatabase): void {
    const since = this.options.now() - this.options.dedupeWindowMs;
    const rows = db
      .prepare<[number], { id: bigint; dedupe_key: string; received_at: bigint }>(
        'SELECT id, dedupe_key, received_at FROM events WHERE received_at > ? ORDER BY id',
      )
      .safeIntegers();
    for (const row of rows.iterate(since)) {
      // The lowest id wins: it is the copy that was acknowledged first.
      if (this.dedupe.get(row.dedupe_key) === undefined) this.dedupe.add(row.dedupe_key, row.id, Number(row.received_at), null);
    }
  }

  /**
   * `append` without a promise per call (EventIngest's path): a one-event call waits in its group's
   * completion list and is answered from the commit; other calls take `append`'s path.
   */
  appendWith(events: EventRecord[], completion: AppendCompletion): void {
    if (events.length !== 1 || this.closed) {
      this.append(events).then(
        (outcomes) => completion.appended(outcomes),
        (err: unknown) => completion.refused(err),
      );
      return;
    }
    const event = events[0]!;
    try {
      EVENT_ROWS.checkStorable(event);
    } catch (err) {
      completion.refused(err);
      return;
    }
    const group = this.placeOne(event);
    if (group === null) {
      completion.appended([{ ok: true, id: this.placedId, duplicate: true }]);
      return;
    }
    group.completions.push(completion);
    group.completionIds.push(this.placedId);
    group.completionDuplicates.push(this.placedDuplicate);
  }

  append(events: EventRecord[]): Promise<AppendOutcome[]> {
    if (this.closed) return Promise.resolve(events.map(() => UNAVAILABLE));
    try {
      // Check all before queuing any, so a rejected call leaves nothing behind.
      for (const event of events) EVENT_ROWS.checkStorable(event);
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- checkStorable's own TypeError, passed on as the async function this was did
      return Promise.reject(err);
    }
    return events.length === 1 ? this.appendOne(events[0]!) : this.appendMany(events);
  }

  /**
   * One event, nearly every call (a plain insert): the general path's bookkeeping (slots, the set
   * of groups awaited, an async frame) was a tenth of what a durable insert allocated.
   */
  private appendOne(event: EventRecord): Promise<AppendOutcome[]> {
    const group = this.placeOne(event);
    const id = this.placedId;
    const duplicate = this.placedDuplicate;
    if (group === null) return Promise.resolve([{ ok: true, id, duplicate }]);
    return group.done.then(() => (group.status === 'committed' ? [{ ok: true, id, duplicate }] : [UNAVAILABLE]));
  }

  /** The id `placeOne` answered and whether it is an earlier copy's (fields, not an object per call). */
  private placedId = 0n;
  private placedDuplicate = false;

  /**
   * Queues one event, or finds the earlier copy it resends: the group whose commit decides the
   * answer, or null when that copy is durable already; the id in `placedId`.
   */
  private placeOne(event: EventRecord): Group | null {
    const first = this.dedupe.get(event.dedupeKey);
    if (first !== undefined && event.receivedAt - first.receivedAt < this.options.dedupeWindowMs) {
      this.counters.duplicates++;
      this.placedId = first.id;
      this.placedDuplicate = true;
      return first.pending;
    }
    const group = this.openGroup();
    const id = this.nextId++;
    this.dedupe.add(event.dedupeKey, id, event.receivedAt, group);
    group.events.push(event);
    group.ids.push(id);
    this.placedId = id;
    this.placedDuplicate = false;
    return group;
  }

  private async appendMany(events: EventRecord[]): Promise<AppendOutcome[]> {
    const slots: Slot[] = [];
    // Nearly every call waits for one group (the one its events joined): a Set only past that.
    let awaitedOne: Group | null = null;
    let awaited: Set<Group> | null = null;
    for (const event of events) {
      const first = this.dedupe.get(event.dedupeKey);
      if (first !== undefined && event.receivedAt - first.receivedAt < this.options.dedupeWindowMs) {
        // Same id as the first copy, which may still be waiting for its commit (in this group or
        // an earlier one): answer once it is durable, and share its fate if that commit fails.
        slots.push({ id: first.id, duplicate: true, group: first.pending });
        const pending = first.pending;
        if (pending !== null) {
          if (awaitedOne === null) awaitedOne = pending;
          else if (pending !== awaitedOne) (awaited ??= new Set([awaitedOne])).add(pending);
        }
        this.counters.duplicates++;
        continue;
      }
      const group = this.openGroup();
      const id = this.nextId++;
      // Replaces an entry outside the window: the ring stays in arrival order, which pruning relies on.
      this.dedupe.add(event.dedupeKey, id, event.receivedAt, group);
      group.events.push(event);
      group.ids.push(id);
      slots.push({ id, duplicate: false, group });
      if (awaitedOne === null) awaitedOne = group;
      else if (group !== awaitedOne) (awaited ??= new Set([awaitedOne])).add(group);
    }

    if (awaited !== null) await Promise.all(Array.from(awaited, (group) => group.done));
    else if (awaitedOne !== null) await awaitedOne.done;
    return slots.map(({ id, duplicate, group }) =>
      group === null || group.status === 'committed' ? { ok: true, id, duplicate } : UNAVAILABLE,
    );
  }

  /**
   * Readiness: commits the probe row on the connection that commits events, queued like a group.
   * False while the store cannot write (disk full, read-only storage); true again by itself once
   * it can, even when no event arrives to prove it.
   */
  async writable(): Promise<boolean> {
    if (this.closed) return false;
    try {
      const probed = this.writer.probe(this.options.now(), PROBE_PAD_BYTES);
      this.options.access?.committing(probed);
      await probed;
      this.lastCommitFailed = false;
      return true;
    } catch {
      this.lastCommitFailed = true;
      return false;
    }
  }

  /** True when the latest commit failed and none has succeeded since. */
  get failing(): boolean {
    return this.lastCommitFailed;
  }

  async close(): Promise<void> {
    this.closed = true;
    // Drain: the commit in flight, then every group still queued, in order.
    if (this.committing !== null) await this.committing;
    while (this.groups.length > 0) await this.flushHead();
    await this.writer.close();
  }

  /** Durability of event commits: the writer thread's setting, or the connection's when inline. */
  get commitSynchronous(): 'FULL' | 'NORMAL' {
    if (this.writer instanceof WriterThread) return this.writer.synchronous;
    return Number(this.db.pragma('synchronous', { simple: true })) >= 2 ? 'FULL' : 'NORMAL';
  }

  /** The writer thread's V8 heap, bytes; null when commits run inline or no thread runs. */
  writerHeap(): Promise<{ total: number; used: number } | null> {
    return this.writer instanceof WriterThread ? this.writer.heap() : Promise.resolve(null);
  }

  get stats(): EventLogStats {
    return { ...this.counters, dedupeKeys: this.dedupe.size };
  }

  /** The group new events join: the newest one, unless it is full. */
  private openGroup(): Group {
    const tail = this.groups[this.groups.length - 1];
    if (tail !== undefined && tail.events.length < this.maxGroupEvents) return tail;
    let resolve: () => void = () => {};
    const done = new Promise<void>((r) => (resolve = r));
    const group: Group = { events: [], ids: [], completions: [], completionIds: [], completionDuplicates: [], status: 'pending', done, resolve };
    this.groups.push(group);
    this.scheduleFlush();
    return group;
  }

  /**
   * setImmediate runs after the current turn's I/O callbacks, so every request parsed in this turn
   * joins the group. While a commit is in flight nothing is scheduled: the next group keeps filling
   * and is committed as soon as the current one is durable.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled || this.committing !== null || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      if (this.committing === null && this.groups.length > 0) {
        this.committing = this.flushHead().finally(() => {
          this.committing = null;
          if (this.groups.length > 0) this.scheduleFlush();
        });
      }
    });
  }

  /** Commits the oldest group; groups commit in order, so ids stay increasing on disk. */
  private async flushHead(): Promise<void> {
    const group = this.groups.shift();
    if (group === undefined) return; // already drained by close()
    const started = performance.now();
    const storedAt = this.options.now();
    try {
      const latest = new Map<string, LastReport>();
      for (const event of group.events) noteReport(latest, event.systemUser, event.dominio, event.eventTime);
      const reports: LastReportRow[] = [...latest.values()].map((r) => [r.systemUser, r.dominio, r.instant.epochMs, r.instant.subMsTicks]);
      const written = this.writer.write({ ids: group.ids, events: group.events, storedAt, reports });
      this.options.access?.committing(written);
      await written;
      group.status = 'committed';
      this.lastCommitFailed = false;
      // Committed entries drop the group so its events can be garbage-collected.
      this.dedupe.settleAll(group);
      this.counters.commits++;
      this.counters.events += group.events.length;
    } catch (error) {
      group.status = 'failed';
      this.lastCommitFailed = true;
      // Never acknowledged, so a retry must be stored, not answered as a duplicate.
      this.dedupe.forgetAll(group);
      this.counters.failedCommits++;
      this.options.onCommitError?.(error, group.events.length);
    }
    const elapsed = performance.now() - started;
    this.counters.commitMs += elapsed;
    this.counters.maxCommitMs = Math.max(this.counters.maxCommitMs, elapsed);
    group.resolve();
    answerCompletions(group);
    if (group.status === 'committed') this.options.onCommitted?.(group.events, group.ids, storedAt);
    this.prune();
  }

  /**
   * Forgets keys older than the window, and the oldest beyond maxDedupeKeys (a resend older than
   * that is stored again: dedupe is best effort past the cap, memory is not). Entries are in
   * arrival order, so stop at the first one to keep. Pending entries are never dropped.
   */
  private prune(): void {
    this.dedupe.prune(this.options.now() - this.options.dedupeWindowMs, this.options.maxDedupeKeys ?? DEFAULT_MAX_DEDUPE_KEYS);
  }
}
