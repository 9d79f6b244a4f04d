import { BroadcastChannel } from 'node:worker_threads';

/**
 * Every thread of a gateway caches provider records (CachedProviderStore); a change made through
 * one thread's cache is announced on a BroadcastChannel and each other thread drops its copy, so
 * threads agree within a message's delay instead of PROVIDER_CACHE_MS, as one process did.
 * The channel's name is unique per gateway, so gateways sharing a process (tests) stay apart.
 */
export class ProviderInvalidation {
  private readonly channel: BroadcastChannel;

  constructor(name: string, invalidate: (systemUser: string) => void) {
    this.channel = new BroadcastChannel(name);
    this.channel.onmessage = (event: unknown) => {
      const data = (event as { data?: unknown }).data;
      if (typeof data === 'string') invalidate(data);
    };
    // Never what keeps a thread alive.
    this.channel.unref();
  }

  readonly announce = (systemUser: string): void => {
    this.channel.postMessage(systemUser);
  };

  close(): void {
    this.channel.close();
  }
}
