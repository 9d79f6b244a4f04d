import type { Backends } from '../shared/backends/types.js';
import { openScaleOutBackends } from '../shared/backends/scale-out/index.js';
import { deploymentMode } from '../shared/config/index.js';
import { embeddedOptionsFromConfig, openEmbeddedBackends } from '../shared/backends/embedded/index.js';
import type { Config } from '../shared/config/index.js';
import type { Logger } from '../shared/runtime/logger.js';
import { Metrics } from '../shared/runtime/metrics.js';
import { ensurePortFree, LISTENERS } from '../shared/runtime/port-check.js';
import { readinessGauge } from '../shared/runtime/readiness-metric.js';
import { schemeOf, serverTlsFromConfig } from '../shared/runtime/tls.js';
import { StuckWatchdog } from '../shared/runtime/stuck-watchdog.js';
import { resolveAdminToken, startAdminServer, type AdminServer } from './admin/server.js';
import { serviceDescription } from './metadata/description.js';
import { TokenBucketLimiter } from './service/rate-limit.js';
import { createOperationLayer } from './service/operation-layer.js';
import { SharedClock } from './threads/clock.js';
import { invalidationChannelName, startFrontEnds, type FrontEnds } from './threads/front-ends.js';
import { ProviderInvalidation } from './threads/provider-invalidation.js';

export interface Application {
  /** The public port's front ends: GATEWAY_THREADS threads, this one included. */
  gateway: FrontEnds;
  admin: AdminServer;
  backends: Backends;
  adminToken: string;
  /** The file the bootstrap token is in (DATA_DIR/admin-token, generated or read), or null when ADMIN_TOKEN set it. */
  adminTokenFile: string | null;
  serviceUrl: string;
  /** This thread's registry; `metricsText` adds the other front-end threads' counts. */
  metrics: Metrics;
  /** What /metrics serves: every thread's metrics together. */
  metricsText(): Promise<string>;
  mode: 'embedded' | 'scale-out' | 'custom';
  /** Resolves when a front-end thread failed: the process must stop (shared/runtime/process.ts does). */
  failed: Promise<Error>;
  /** SIGHUP: every listener serves TLS_CERT_FILE / TLS_KEY_FILE as they are now; open connections keep theirs. */
  reloadTls(): Promise<void>;
  /** Graceful stop: stop accepting, finish in-flight requests, flush the event log, close stores. */
  close(): Promise<void>;
}

interface ApplicationOptions {
  config: Config;
  logger: Logger;
  /** Date.now unless given; with GATEWAY_THREADS > 1 only a SharedClock reaches the other threads. */
  clock?: (() => number) | SharedClock;
  /** Defaults to the embedded store under config.embedded.dataDir. */
  backends?: Backends;
  /** Override ports (0 = ephemeral), for tests. */
  port?: number;
  adminPort?: number;
  /** Override HTTP_PORT (0 = ephemeral), for tests. */
  httpPort?: number;
  metrics?: Metrics;
}

/** The two composition roots: shared/backends/embedded/ and shared/backends/scale-out/. */
async function openBackends(mode: string, config: Config, logger: Logger, metrics: Metrics, clock: () => number): Promise<Backends> {
  if (mode === 'scale-out') return openScaleOutBackends(config, logger, metrics);
  const backends = await openEmbeddedBackends(embeddedOptionsFromConfig(config, { logger, metrics, now: clock }));
  metrics.eventWriterHeapSource = () => backends.eventLog.writerHeap();
  return backends;
}

/** Wires backends (embedded or scale-out, by configuration), the operation layer, the public gateway and the admin API. */
export async function startApplication(options: ApplicationOptions): Promise<Application> {
  const { config, logger } = options;
  const sharedClock = options.clock instanceof SharedClock ? options.clock : null;
  const clock = sharedClock?.now ?? (options.clock as (() => number) | undefined) ?? Date.now;
  const metrics = options.metrics ?? new Metrics();
  // Checked first: a WSDL_FILE declaring what the gateway does not serve stops the start before any store opens.
  const description = serviceDescription(config.service);
  if (description.beyond.length > 0) {
    logger.info(
      { wsdlFile: config.service.wsdlFile, beyond: description.beyond },
      `WSDL_FILE ${config.service.wsdlFile} declares less than this gateway serves; served all the same, not described to its clients: ${description.beyond.join('; ')}`,
    );
  }
  // So is a half TLS configuration (a certificate without its key, HTTP_PORT without TLS).
  const serverTls = serverTlsFromConfig(config);
  const mode = options.backends === undefined ? deploymentMode(config) : 'custom';
  // So is a port another process serves, before any store opens (checked again right before binding).
  await ensurePortFree(config.service.host, options.port ?? config.service.port, LISTENERS.service);
  if (serverTls !== null && config.service.httpPort !== null) await ensurePortFree(config.service.host, options.httpPort ?? config.service.httpPort, LISTENERS.plain);
  await ensurePortFree(config.admin.host, options.adminPort ?? config.admin.port, LISTENERS.admin);
  const opened = options.backends ?? (await openBackends(mode, config, logger, metrics, clock));
  // Every read of the operation layer and the admin API on this thread goes through one provider
  // cache, so this process's own writes invalidate it; other threads' writes are announced.
  const invalidation = invalidationChannelName();
  let announcer: ProviderInvalidation | null = null;
  // One set of rate buckets for every thread.
  const rateLimiter = new TokenBucketLimiter(config.events.rateLimitPerSecond);
  const { service, providers } = createOperationLayer({ stores: opened, config, clock, metrics, rateLimiter, announce: (systemUser) => announcer?.announce(systemUser), logger });
  if (config.service.threads > 1) announcer = new ProviderInvalidation(invalidation, (systemUser) => providers.invalidate(systemUser));
  let frontEnds: FrontEnds | null = null;
  const backends: Backends = {
    ...opened,
    providers,
    // With GATEWAY_THREAD_CLIENTS=own the other threads' Redis and Kafka clients count too.
    healthy: async () => (await opened.healthy()) && (frontEnds === null || (await frontEnds.healthy())),
    // ...and name themselves when they fail (the reason /readyz and the overview give).
    status: async () => {
      const status = await opened.status();
      if (frontEnds === null || (await frontEnds.healthy())) return status;
      const detail = 'a front-end thread is not serving, or its own Redis or Kafka clients do not answer';
      return { ...status, checks: [...status.checks, { name: 'front-end threads', ok: false, detail }] };
    },
    close: () => opened.close(),
  };
  readinessGauge(metrics, 'gateway_ready', 'Whether every backend answers (1) or not (0): the check /readyz makes', () => backends.healthy());
  let gateway: FrontEnds;
  try {
    gateway = frontEnds = await startFrontEnds({
      config,
      logger,
      service,
      metrics,
      description,
      clock,
      sharedClock,
      // The other threads keep their own provider caches over the store itself.
      state: { ...opened, rateLimiter },
      invalidation,
      scaleOut: mode === 'scale-out',
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.httpPort === undefined ? {} : { httpPort: options.httpPort }),
    });
  } catch (err) {
    announcer?.close();
    if (options.backends === undefined) await opened.close();
    throw err;
  }
  // The last resort of self-healing: a client broken past STUCK_EXIT_SECONDS while its engine
  // answers makes the process exit 1, as a failed front-end thread does.
  const watchdog = opened.watched === undefined ? null : new StuckWatchdog(opened.watched, { limitMs: config.health.stuckExitMs, logger });
  watchdog?.start();
  const { token, generated, path } = await resolveAdminToken(config);
  const admin = await startAdminServer({
    config,
    backends,
    logger,
    token,
    clock,
    mode: mode === 'scale-out' ? 'scale-out' : 'embedded',
    metrics: () => gateway.metricsText(),
    refusals: (systemUser, limit) => gateway.refusals(systemUser, limit),
    ...(options.adminPort === undefined ? {} : { port: options.adminPort }),
  });
  const host = config.service.host === '0.0.0.0' || config.service.host === '::' ? 'localhost' : config.service.host;
  const scheme = schemeOf(serverTls);
  const serviceUrl = `${config.service.publicUrl ?? `${scheme}://${host}:${gateway.port}`}${config.service.path}`;
  if (generated) logger.info({ path }, 'generated an admin token; it is stored in this file');
  else if (path !== null) logger.info({ path }, 'admin token read from file');

  let closing: Promise<void> | null = null;
  return {
    gateway,
    admin,
    backends,
    adminToken: token,
    adminTokenFile: path,
    serviceUrl,
    metrics,
    metricsText: () => gateway.metricsText(),
    mode,
    failed: watchdog === null ? gateway.failed : Promise.race([gateway.failed, watchdog.failed]),
    reloadTls: async () => {
      admin.reloadTls();
      await gateway.reloadTls();
    },
    close: () => {
      closing ??= (async () => {
        watchdog?.stop();
        // Front ends first: their in-flight requests still need the backends.
        await gateway.close();
        await admin.close();
        announcer?.close();
        await backends.close();
      })();
      return closing;
    },
  };
}

/** uWS falls back to a slow node:http emulation, silently, where its binary does not load: say so. */
export function warnOnFallback(app: Application, logger: Logger): void {
  const fallback = app.gateway.nativeBinaries.flatMap((binary, thread) => (binary === null ? [thread] : []));
  if (fallback.length > 0) logger.warn({ threads: fallback }, 'uWebSockets.js native binary not loaded: running on the slow fallback');
}
