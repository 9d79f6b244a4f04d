import { createParser } from 'eventsource-parser';

/**
 * Follows a Server-Sent Events route with fetch and a stream reader, because EventSource cannot
 * send the Authorization header and the token must never go in a URL. Reconnects with capped
 * exponential backoff; a 401 ends it (the token is no longer good). Free of DOM globals so it is
 * unit-tested in Node against a real HTTP server.
 */
export type StreamState = 'connecting' | 'open' | 'retrying' | 'stopped';

export interface FollowOptions {
  url: string;
  token: string;
  /** Each `data:` of an SSE message whose event name is `eventName` (default "event"). */
  onMessage(data: string, id: string | undefined): void;
  onState?(state: StreamState): void;
  /** The server refused the token: the stream stops. */
  onUnauthorized?(): void;
  eventName?: string;
  initialDelayMs?: number;
  maxDelayMs?: number;
  fetch?: typeof fetch;
}

/** Delay before reconnect attempt `attempt` (0-based): initial × 2^attempt, capped. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
}

/** Starts following; the returned function stops it (and aborts the open request). */
export function followStream(options: FollowOptions): () => void {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const eventName = options.eventName ?? 'event';
  const initialMs = options.initialDelayMs ?? 500;
  const maxMs = options.maxDelayMs ?? 15_000;
  let stopped = false;
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let attempt = 0;

  const setState = (state: StreamState): void => options.onState?.(state);

  function retryLater(): void {
    if (stopped) return;
    setState('retrying');
    timer = setTimeout(connect, backoffDelay(attempt, initialMs, maxMs));
    attempt += 1;
  }

  async function connect(): Promise<void> {
    timer = null;
    if (stopped) return;
    setState('connecting');
    controller = new AbortController();
    try {
      const res = await doFetch(options.url, {
        headers: { Authorization: `Bearer ${options.token}`, Accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (res.status === 401) {
        stopped = true;
        setState('stopped');
        options.onUnauthorized?.();
        return;
      }
      if (!res.ok || res.body === null) {
        await res.body?.cancel();
        retryLater();
        return;
      }
      attempt = 0;
      setState('open');
      const parser = createParser({
        onEvent(message) {
          if ((message.event ?? 'message') === eventName) options.onMessage(message.data, message.id);
        },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      // Network failure or our own abort: either way, retry unless stopped.
    }
    retryLater();
  }

  void connect();
  return () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    controller?.abort();
    setState('stopped');
  };
}
