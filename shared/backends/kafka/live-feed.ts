import { decodeEvent } from '../../events/wire.js';
import type { EventFeed, FeedSubscription, StoredEvent } from '../types.js';
import type { KafkaClientOptions, KafkaLogger } from './client.js';
import { PartitionFetcher } from './fetcher.js';
import { FailureLog } from '../../failure-log.js';

export interface KafkaEventFeedOptions extends KafkaClientOptions {
  topic: string;
  logger: KafkaLogger;
}

/** How long a fetch waits at the broker when nothing new arrived: the stream's latency when idle. */
const FEED_WAIT_MS = 250;
/** Pause after a failed fetch before the next (the broker is down or stalled). */
const RETRY_MS = 1000;

/**
 * The live view of the scale-out mode: each subscription reads every partition of the event topic
 * from where it ended when the subscription started, with a reader of its own and no consumer
 * group (nothing is left behind on the broker when it ends). Any gateway serves it and sees what
 * every gateway accepted. A broker that fails or stalls is retried until the subscription ends,
 * logged once while it lasts (FailureLog).
 */
export class KafkaEventFeed implements EventFeed {
  private readonly subscriptions = new Set<{ close(): Promise<void> }>();
  private readonly failures: FailureLog;

  constructor(private readonly options: KafkaEventFeedOptions) {
    this.failures = new FailureLog(options.logger, 'live event stream: Kafka cannot be read');
  }

  /** Subscriptions open now. */
  get size(): number {
    return this.subscriptions.size;
  }

  async subscribe(listener: (event: StoredEvent) => void): Promise<FeedSubscription> {
    const fetcher = await PartitionFetcher.open({ ...this.options, clientId: `${this.options.clientId}-stream`, maxWaitMs: FEED_WAIT_MS });
    // Where the topic ends now: everything acknowledged from here on is delivered.
    let positions: Map<number, bigint>;
    try {
      positions = new Map((await fetcher.offsets('latest')).map((offset, partition) => [partition, offset]));
    } catch (error) {
      await fetcher.close();
      throw error;
    }
    const state = { open: true, wake: () => {} };
    /** A function, not a property read: close() changes it while the loop awaits. */
    const open = (): boolean => state.open;
    const loop = (async () => {
      while (state.open) {
        try {
          for (const fetched of await fetcher.fetch(positions)) {
            if (fetched.outOfRange !== null) {
              positions.set(fetched.partition, fetched.outOfRange);
              continue;
            }
            positions.set(fetched.partition, fetched.next);
            for (const message of fetched.messages) {
              if (!open()) return;
              if (message.value === null) continue;
              let decoded: ReturnType<typeof decodeEvent>;
              try {
                decoded = decodeEvent(message.value);
              } catch {
                continue; // a poison message: the worker sets it aside; the live view skips it
              }
              listener({ ...decoded.event, id: decoded.id, storedAt: Number(message.timestamp) });
            }
          }
          this.failures.ok();
        } catch (error) {
          if (!open()) return;
          this.failures.failed(error);
          await new Promise<void>((resolve) => {
            state.wake = resolve;
            setTimeout(resolve, RETRY_MS).unref();
          });
        }
      }
    })();
    let closing: Promise<void> | null = null;
    const subscription = {
      close: () => {
        closing ??= (async () => {
          state.open = false;
          state.wake();
          this.subscriptions.delete(subscription);
          await fetcher.close();
          await loop;
        })();
        return closing;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Ends every subscription (the gateway is stopping). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.subscriptions].map((s) => s.close()));
  }
}
