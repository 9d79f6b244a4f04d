import type { Config } from '../../shared/config/index.js';
import type { Logger } from '../../shared/runtime/logger.js';
import type { Metrics } from '../../shared/runtime/metrics.js';
import type { ServiceBackends } from './handlers.js';
import { CachedProviderStore } from './provider-cache.js';
import type { RateLimiter } from './rate-limit.js';
import { RefusalLog } from './refusals.js';
import { OperationService } from './service.js';

interface OperationLayer {
  service: OperationService;
  /**
   * The provider records this thread reads, cached for PROVIDER_CACHE_MS; the admin API on the
   * main thread reads through it too, so its writes show at once.
   */
  providers: CachedProviderStore;
}

interface OperationLayerOptions {
  /** The stores as opened (providers uncached). */
  stores: ServiceBackends;
  config: Config;
  clock: () => number;
  metrics: Metrics;
  /** One limiter for every thread of the process (the main thread's). */
  rateLimiter: RateLimiter;
  /** Told of every provider this thread changes, so the other threads drop their copies. */
  announce?: (systemUser: string) => void;
  /** Where the refusal log writes its (rate-limited) lines. */
  logger?: Logger;
}

/**
 * The operation layer of one front-end thread, built the same way on the main thread
 * (gateway/app.ts) and on every other one (gateway/threads/front-end-thread.ts).
 */
export function createOperationLayer(options: OperationLayerOptions): OperationLayer {
  const { stores, config } = options;
  const providers = new CachedProviderStore(stores.providers, config.logins.providerCacheMs, options.clock, undefined, options.announce);
  const refusals = new RefusalLog(options.logger === undefined ? {} : { logger: options.logger });
  const service = new OperationService({ ...stores, providers }, config, { metrics: options.metrics, rateLimiter: options.rateLimiter, refusals });
  return { service, providers };
}
