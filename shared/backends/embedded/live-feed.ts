import { ACTIVITY_BUCKET_MS, ACTIVITY_WINDOW_MS, type EventActivity, type EventFeed, type EventRecord, type FeedSubscription, type StoredEvent } from '../types.js';

type Listener = (event: StoredEvent) => void;

/**
 * The live view of events committed in this process (the embedded mode has one process per
 * store). Costs nothing while nobody listens: events become StoredEvents only for listeners.
 */
export class LocalEventFeed implements EventFeed {
  private readonly listeners = new Set<Listener>();

  async subscribe(listener: Listener): Promise<FeedSubscription> {
    // A wrapper per subscription, so the same function subscribed twice gets two entries.
    const entry: Listener = (event) => listener(event);
    this.listeners.add(entry);
    return {
      close: async () => {
        this.listeners.delete(entry);
      },
    };
  }

  /** Subscriptions open now. */
  get size(): number {
    return this.listeners.size;
  }

  /** Hands one committed group to every listener; a listener that throws is dropped, the rest go on. */
  publish(events: readonly EventRecord[], ids: readonly bigint[], storedAt: number): void {
    if (this.listeners.size === 0) return;
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const id = ids[i];
      if (event === undefined || id === undefined) continue;
      const stored: StoredEvent = { ...event, id, storedAt };
      for (const listener of this.listeners) {
        try {
          listener(stored);
        } catch {
          this.listeners.delete(listener);
        }
      }
    }
  }
}

/**
 * Events received per 10 s bucket and per provider over the last 15 minutes, counted as they are
 * committed. Counting in memory keeps the overview off the events table, where a 15-minute range
 * at full ingest is millions of rows read on the event loop. Starts empty at each start.
 */
export class ArrivalCounter {
  /** Bucket start → provider → events. */
  private readonly buckets = new Map<number, Map<string, number>>();

  record(events: readonly EventRecord[]): void {
    for (const event of events) {
      const at = event.receivedAt - (event.receivedAt % ACTIVITY_BUCKET_MS);
      let bucket = this.buckets.get(at);
      if (bucket === undefined) {
        bucket = new Map();
        this.buckets.set(at, bucket);
        this.prune(at);
      }
      bucket.set(event.systemUser, (bucket.get(event.systemUser) ?? 0) + 1);
    }
  }

  /** Counts since `since` (rounded down to its bucket); lastEventAt is left null for the caller to fill. */
  activity(since: number): EventActivity {
    const from = since - (since % ACTIVITY_BUCKET_MS);
    const perProvider = new Map<string, number>();
    const buckets: EventActivity['buckets'] = [];
    for (const [at, bucket] of [...this.buckets].sort((a, b) => a[0] - b[0])) {
      if (at < from) continue;
      let events = 0;
      for (const [systemUser, n] of bucket) {
        events += n;
        perProvider.set(systemUser, (perProvider.get(systemUser) ?? 0) + n);
      }
      buckets.push({ at, events });
    }
    return { buckets, providers: [...perProvider].map(([systemUser, events]) => ({ systemUser, events, lastEventAt: null })) };
  }

  private prune(newest: number): void {
    for (const at of this.buckets.keys()) if (at <= newest - ACTIVITY_WINDOW_MS - ACTIVITY_BUCKET_MS) this.buckets.delete(at);
  }
}
