import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../../shared/config/index.js';
import type { Logger } from '../../shared/runtime/logger.js';
import { ensurePortFree, LISTENERS } from '../../shared/runtime/port-check.js';
import type { Metrics } from '../../shared/runtime/metrics.js';
import { nativeBinaryPath } from '../transport/uws.js';
import type { ServiceDescription } from '../metadata/description.js';
import { startGateway, type GatewayServer } from '../server.js';
import { newestFirst, type Refusal } from '../service/refusals.js';
import type { OperationService } from '../service/service.js';
import type { SharedClock } from './clock.js';
import { FrontEndPool } from './pool.js';
import type { SharedState } from './shared-state.js';

/**
 * The public port's front ends: the main thread's own and, with GATEWAY_THREADS = N > 1, N - 1
 * worker threads (pool.ts), all listening on one port with SO_REUSEPORT, so the kernel spreads
 * connections over them. With N = 1 this is startGateway alone, as before threads existed.
 */
export interface FrontEnds {
  readonly port: number;
  /** The plain listener beside TLS (HTTP_PORT), or null. */
  readonly httpPort: number | null;
  /** Serves TLS_CERT_FILE / TLS_KEY_FILE as they are now on every thread (SIGHUP); open connections keep theirs. */
  reloadTls(): Promise<void>;
  /** Front ends serving the port, the main thread's included. */
  readonly threads: number;
  /** Stops accepting on every thread, waits for in-flight requests (up to graceMs), ends the threads. */
  close(graceMs?: number): Promise<void>;
  /** Prometheus text of `metrics` with every other thread's counts added. */
  metricsText(): Promise<string>;
  /** The other threads serve and their own backends answer (GATEWAY_THREAD_CLIENTS=own); part of readiness. */
  healthy(): Promise<boolean>;
  /** Resolves when a front-end thread failed (never with one thread): the process must stop. */
  readonly failed: Promise<Error>;
  /** The uWS binary each front end loaded, this thread's first (null: the slow JS fallback). */
  readonly nativeBinaries: readonly (string | null)[];
  /** The latest refusals of every front end, newest first: of one SystemUser (null: of none), or of all (undefined). */
  refusals(systemUser: string | null | undefined, limit: number): Promise<Refusal[]>;
}

interface FrontEndsOptions {
  config: Config;
  logger: Logger;
  service: OperationService;
  metrics: Metrics;
  description: ServiceDescription;
  clock: () => number;
  /** The clock the other threads read; null: they use Date.now (then `clock` must be Date.now too). */
  sharedClock: SharedClock | null;
  /** What the other threads call on this one. */
  state: SharedState;
  /** BroadcastChannel name of provider-cache invalidations (provider-invalidation.ts). */
  invalidation: string;
  /** Scale-out: the other threads may open their own Redis and Kafka clients (GATEWAY_THREAD_CLIENTS=own). */
  scaleOut: boolean;
  /** Overrides config.service.port (0 = a free port, for tests). */
  port?: number;
  /** Overrides config.service.httpPort (0 = a free port; with TLS only). */
  httpPort?: number;
}

/** A fresh name for one gateway's invalidation channel. */
export const invalidationChannelName = (): string => `gateway-provider-cache-${randomUUID()}`;

const never = new Promise<Error>(() => {});

export async function startFrontEnds(options: FrontEndsOptions): Promise<FrontEnds> {
  const { config, logger, service, metrics, description, clock } = options;
  const requested = options.port ?? config.service.port;
  const threads = config.service.threads;
  const httpRequested = options.httpPort ?? config.service.httpPort;
  // Right before the first listener binds: no other process may already serve these ports
  // (SO_REUSEPORT would let it share them silently); this process's threads bind after.
  await ensurePortFree(config.service.host, requested, LISTENERS.service);
  if (httpRequested !== null && config.tls.certFile !== null) await ensurePortFree(config.service.host, httpRequested, LISTENERS.plain);
  if (threads === 1) {
    const gateway = await startGateway({ config, service, logger, clock, metrics, description, port: requested, ...(httpRequested === null ? {} : { httpPort: httpRequested }) });
    return {
      port: gateway.port,
      httpPort: gateway.httpPort,
      reloadTls: () => gateway.reloadTls(),
      threads: 1,
      close: (graceMs) => gateway.close(graceMs),
      metricsText: () => metrics.text(),
      healthy: async () => true,
      failed: never,
      nativeBinaries: [nativeBinaryPath()],
      refusals: async (systemUser, limit) => service.refusals.recent(systemUser, limit),
    };
  }
  if (options.sharedClock === null && clock !== Date.now) {
    throw new Error('A custom clock cannot reach the other front-end threads: pass a SharedClock, or set GATEWAY_THREADS=1.');
  }

  // Every thread listens on the same plain port too: a free one is chosen first for 0.
  const httpPort = httpRequested === 0 && config.tls.certFile !== null ? await freePort(config.service.host) : httpRequested;
  const { gateway, port } = await listenShared(
    requested,
    (port) => startGateway({ config, service, logger, clock, metrics, description, port, ...(httpPort === null ? {} : { httpPort }) }),
    config.service.host,
  );
  let pool: FrontEndPool;
  try {
    pool = await FrontEndPool.start({
      config,
      logger,
      state: options.state,
      threads: threads - 1,
      port,
      httpPort: gateway.httpPort,
      clock: options.sharedClock?.cell ?? null,
      invalidation: options.invalidation,
      ownClients: options.scaleOut && config.service.threadClients === 'own',
    });
  } catch (err) {
    await gateway.close(0);
    throw err;
  }
  logger.debug({ threads, port }, 'front-end threads listening');
  return {
    port,
    httpPort: gateway.httpPort,
    reloadTls: async () => {
      await Promise.all([gateway.reloadTls(), pool.reloadTls()]);
    },
    threads,
    close: async (graceMs) => {
      await Promise.all([gateway.close(graceMs), pool.close(graceMs)]);
    },
    metricsText: async () => AggregatorRegistry.aggregate([await metrics.registry.getMetricsAsJSON(), ...(await pool.metrics())]).metrics(),
    healthy: () => pool.healthy(),
    failed: pool.failed,
    nativeBinaries: [nativeBinaryPath(), ...pool.nativeBinaries],
    refusals: async (systemUser, limit) => newestFirst([...service.refusals.recent(systemUser, limit), ...(await pool.refusals(systemUser, limit))]).slice(0, limit),
  };
}

/** Attempts at a free port for port 0 before giving up (another process took the one found). */
const FREE_PORT_ATTEMPTS = 5;

/**
 * Listens on `requested`, sharing it with the other threads. uWS sets SO_REUSEPORT only on a
 * given port, never on port 0, so for port 0 a free port is found first (and looked for again in
 * the rare case something else took it before uWS bound it).
 */
async function listenShared(requested: number, listen: (port: number) => Promise<GatewayServer>, host: string): Promise<{ gateway: GatewayServer; port: number }> {
  if (requested !== 0) return { gateway: await listen(requested), port: requested };
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(host);
    try {
      return { gateway: await listen(port), port };
    } catch (err) {
      if (attempt >= FREE_PORT_ATTEMPTS) throw err;
    }
  }
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
