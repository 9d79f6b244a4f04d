/** A Server-Sent Events reader for tests: what the console and the CLI do, with fetch and a stream reader. */
import { createParser } from 'eventsource-parser';

export interface SseClient {
  status: number;
  /** Events received so far: the parsed data of each `event: event`. */
  events: Record<string, unknown>[];
  comments: string[];
  /** Resolves when an event matching `test` has arrived (or rejects after the timeout). */
  waitFor(test: (event: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves once the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, token: string): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, signal: abort.signal });
  const events: Record<string, unknown>[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const parser = createParser({
    onEvent: (m) => {
      if (m.event === 'event') events.push(JSON.parse(m.data) as Record<string, unknown>);
      for (const w of waiters) w();
    },
    onComment: (c) => comments.push(c.trim()),
  });
  const ended = (async () => {
    if (res.body === null) return;
    try {
      for await (const text of res.body.pipeThrough(new TextDecoderStream())) parser.feed(text);
    } catch {
      // aborted by close()
    }
  })();
  return {
    status: res.status,
    events,
    comments,
    ended,
    waitFor(test, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const hit = events.find(test);
          if (hit === undefined) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.codigo))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };
}
