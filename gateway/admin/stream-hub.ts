import type { ServerResponse } from 'node:http';
import type { EventFeed, FeedSubscription, StoredEvent } from '../../shared/backends/types.js';
import type { Logger } from '../../shared/runtime/logger.js';
import { AdminError } from './errors.js';
import { eventView } from './views.js';

/**
 * Every live event stream of the admin port, fed from one subscription to the event feed.
 *
 * The costs that starved ingest when each stream had its own subscription (a view, a JSON text and a
 * socket write per stream per stored event) are now paid once per flush: events are gathered for
 * FLUSH_MS, each one is serialised at most once, and each stream gets one write per flush (the same
 * buffer for every unfiltered stream). A stream carries at most `eventsPerSecond`; what ingest stores
 * beyond that is counted in a `skipped` message (the paged list has every event). Writes of one flush
 * are spread over turns of the event loop, so thousands of streams never hold it for long.
 */
interface StreamFilter {
  provider: string | null;
  dominio: string | null;
}

interface StreamHubOptions {
  feed: EventFeed;
  logger: Logger;
  /** Streams open at once; one more is answered 503. */
  maxStreams: number;
  /** Events per second a stream carries at most. */
  eventsPerSecond: number;
  /** Idle time after which a stream gets a comment line (proxies time idle streams out). */
  keepAliveMs: number;
  /** Unsent output past which a reader is cut as too slow. */
  backlogBytes: number;
  /** How often gathered events are written (default FLUSH_MS). */
  flushMs?: number;
}

/** A place reserved for one stream: attached to its response once the answer may begin. */
export interface StreamTicket {
  attach(res: ServerResponse): void;
  /** Gives the place back (the client left before the answer began). */
  release(): void;
}

const FLUSH_MS = 500;
/** Streams written per turn of the event loop during one flush. */
const WRITES_PER_TURN = 200;

interface LiveStream {
  filter: StreamFilter;
  res: ServerResponse | null;
  /** Output gathered before the response was attached (a short window, bounded by the backlog limit). */
  held: Buffer[];
  heldBytes: number;
  lastWriteAt: number;
}

const frameOf = (e: StoredEvent): string => `event: event\nid: ${e.id.toString()}\ndata: ${JSON.stringify(eventView(e))}\n\n`;
const matches = (f: StreamFilter, e: StoredEvent): boolean =>
  (f.provider === null || e.systemUser === f.provider) && (f.dominio === null || e.dominio === f.dominio);

export class StreamHub {
  private readonly streams = new Set<LiveStream>();
  private subscription: Promise<FeedSubscription> | null = null;
  private pending: StoredEvent[] = [];
  private skipped = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;
  private readonly flushMs: number;
  private readonly perFlush: number;

  constructor(private readonly opts: StreamHubOptions) {
    this.flushMs = opts.flushMs ?? FLUSH_MS;
    this.perFlush = Math.max(1, Math.round((opts.eventsPerSecond * this.flushMs) / 1000));
  }

  /** Streams open (or reserved) now. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Reserves a place and makes sure the feed is followed before the answer begins: past the cap the
   * answer is 503, a failing feed rejects (the caller answers 503), and an event stored after this
   * resolves reaches the stream.
   */
  async open(filter: StreamFilter): Promise<StreamTicket> {
    if (this.streams.size >= this.opts.maxStreams) {
      throw AdminError.of('tooManyStreams', { max: this.opts.maxStreams });
    }
    const stream: LiveStream = { filter, res: null, held: [], heldBytes: 0, lastWriteAt: Date.now() };
    this.streams.add(stream);
    try {
      await this.follow();
    } catch (err) {
      this.remove(stream);
      throw err;
    }
    return {
      attach: (res) => this.attach(stream, res),
      release: () => this.remove(stream),
    };
  }

  /** Ends every stream (server closing) and stops following the feed. */
  close(): void {
    for (const stream of [...this.streams]) {
      this.remove(stream);
      // A reader with output still unsent may never take it: waiting for it would hold the stop.
      if (stream.res !== null && stream.res.writableLength > 0) stream.res.destroy();
      else stream.res?.end();
    }
  }

  private follow(): Promise<FeedSubscription> {
    if (this.subscription === null) {
      const subscribing = this.opts.feed.subscribe((e) => this.gather(e));
      this.subscription = subscribing;
      subscribing.catch(() => {
        if (this.subscription === subscribing) this.subscription = null;
      });
      this.timer = setInterval(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
    return this.subscription;
  }

  private gather(e: StoredEvent): void {
    if (this.pending.length < this.perFlush) this.pending.push(e);
    else this.skipped++;
  }

  private attach(stream: LiveStream, res: ServerResponse): void {
    if (!this.streams.has(stream)) {
      res.destroy();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // Proxies (nginx) must pass each event on at once.
      'X-Accel-Buffering': 'no',
    });
    stream.res = res;
    res.write(': stream open\n\n');
    for (const chunk of stream.held.splice(0)) res.write(chunk);
    stream.heldBytes = 0;
    res.on('close', () => this.remove(stream));
    res.on('error', (err) => this.opts.logger.debug({ err }, 'admin: event stream connection error'));
  }

  /** Every exit (client gone, reader too slow, server closing) comes here; the last one stops the subscription. */
  private remove(stream: LiveStream): void {
    if (!this.streams.delete(stream)) return;
    stream.held.length = 0;
    if (this.streams.size > 0) return;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.pending = [];
    this.skipped = 0;
    const subscription = this.subscription;
    this.subscription = null;
    subscription
      ?.then((s) => s.close())
      .catch((err: unknown) => this.opts.logger.warn({ err }, 'admin: closing the event feed subscription failed'));
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      await this.writeAll();
    } finally {
      this.flushing = false;
    }
  }

  private async writeAll(): Promise<void> {
    const batch = this.pending;
    const skipped = this.skipped;
    this.pending = [];
    this.skipped = 0;
    const now = Date.now();
    // Serialised once, whatever the number of streams, and only when some stream wants it.
    const frames: (string | undefined)[] = new Array<string | undefined>(batch.length);
    const frame = (i: number): string => (frames[i] ??= frameOf(batch[i] as StoredEvent));
    const note = skipped > 0 ? `event: skipped\ndata: {"events":${skipped}}\n\n` : '';
    let everything: Buffer | null = null;
    const streams = [...this.streams];
    for (let from = 0; from < streams.length; from += WRITES_PER_TURN) {
      if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      for (const stream of streams.slice(from, from + WRITES_PER_TURN)) {
        if (!this.streams.has(stream)) continue;
        let out: Buffer | null;
        if (stream.filter.provider === null && stream.filter.dominio === null) {
          everything ??= batch.length === 0 && note === '' ? null : Buffer.from(note + batch.map((_, i) => frame(i)).join(''));
          out = everything;
        } else {
          let text = note;
          for (let i = 0; i < batch.length; i++) if (matches(stream.filter, batch[i] as StoredEvent)) text += frame(i);
          out = text === '' ? null : Buffer.from(text);
        }
        if (out === null && now - stream.lastWriteAt >= this.opts.keepAliveMs) out = Buffer.from(': keep-alive\n\n');
        if (out !== null) this.write(stream, out, now);
      }
    }
  }

  private write(stream: LiveStream, out: Buffer, now: number): void {
    const res = stream.res;
    if (res === null) {
      if (stream.heldBytes + out.length <= this.opts.backlogBytes) {
        stream.held.push(out);
        stream.heldBytes += out.length;
      }
      return;
    }
    if (res.writableEnded || res.destroyed) {
      this.remove(stream);
      return;
    }
    if (res.writableLength > this.opts.backlogBytes) {
      // The reader is not reading: ending politely would wait for a flush that never comes, so the
      // connection is cut and everything held for it freed.
      this.opts.logger.warn({ backlog: res.writableLength }, 'admin: event stream client reads too slowly; cutting the stream');
      this.remove(stream);
      res.destroy();
      return;
    }
    stream.lastWriteAt = now;
    res.write(out);
  }
}
