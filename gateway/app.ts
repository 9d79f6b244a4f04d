import type { Backends } from '../shared/backends/types.js';
import { CachedProviderStore } from '../shared/backends/cached-providers.js';
import { deploymentMode, openDistributedBackends } from '../shared/backends/distributed.js';
import { openEmbeddedBackends } from '../shared/backends/embedded/index.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { readinessGauge } from '../shared/readiness-metric.js';
import { resolveAdminToken, startAdminServer, type AdminServer } from './admin/server.js';
import { serviceDescription } from './metadata/description.js';
import { startGateway, type GatewayServer } from './server.js';
import { OperationService } from './service/service.js';

export interface Application {
  gateway: GatewayServer;
  admin: AdminServer;
  backends: Backends;
  adminToken: string;
  serviceUrl: string;
  metrics: Metrics;
  mode: 'embedded' | 'distributed' | 'custom';
  /** Graceful stop: stop accepting, finish in-flight requests, flush the event log, close stores. */
  close(): Promise<void>;
}

export interface ApplicationOptions {
  config: Config;
  logger: Logger;
  clock?: () => number;
  /** Defaults to the embedded store under config.dataDir. */
  backends?: Backends;
  /** Override ports (0 = ephemeral), for tests. */
  port?: number;
  adminPort?: number;
  metrics?: Metrics;
}

function openBackends(mode: string, config: Config, logger: Logger, metrics: Metrics, clock: () => number): Promise<Backends> {
  if (mode === 'distributed') return openDistributedBackends(config, logger, metrics);
  return openEmbeddedBackends({
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    dedupeWindowMs: config.dedupeWindowMs,
    maxDedupeKeys: config.dedupeMaxKeys,
    offThreadCommits: config.sqliteCommit === 'thread',
    maxSessions: config.sessionMax,
    minFreeBytes: config.storeMinFreeBytes,
    lockoutTrackedMax: config.lockoutTrackedMax,
    idFloor: config.idFloor,
    now: clock,
    onCommitError: (err, events) => logger.error({ err, events }, 'event commit failed; those events were answered -5'),
  });
}

/** Wires backends (embedded or distributed, by configuration), the operation layer, the public gateway and the admin API. */
export async function startApplication(options: ApplicationOptions): Promise<Application> {
  const { config, logger, clock = Date.now } = options;
  const metrics = options.metrics ?? new Metrics();
  // Checked first: a WSDL_FILE that does not match the catalogue stops the start before any store opens.
  const description = serviceDescription(config);
  const mode = options.backends === undefined ? deploymentMode(config) : 'custom';
  const opened = options.backends ?? (await openBackends(mode, config, logger, metrics, clock));
  // Every read of the operation layer and the admin API goes through one provider cache, so this
  // process's own writes invalidate it.
  const backends: Backends = {
    ...opened,
    providers: new CachedProviderStore(opened.providers, config.providerCacheMs, clock),
    healthy: () => opened.healthy(),
    close: () => opened.close(),
  };
  readinessGauge(metrics, 'gateway_ready', 'Whether every backend answers (1) or not (0): the check /readyz makes', () => backends.healthy());
  const service = new OperationService(backends, config, { metrics });
  const gateway = await startGateway({ config, service, logger, clock, metrics, description, ...(options.port === undefined ? {} : { port: options.port }) });
  const { token, generated, path } = await resolveAdminToken(config);
  const admin = await startAdminServer({
    config,
    backends,
    logger,
    token,
    clock,
    mode: mode === 'distributed' ? 'distributed' : 'embedded',
    metrics: () => metrics.text(),
    ...(options.adminPort === undefined ? {} : { port: options.adminPort }),
  });
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const serviceUrl = `${config.publicUrl ?? `http://${host}:${gateway.port}`}${config.servicePath}`;
  if (generated) logger.info({ path }, 'generated an admin token; it is stored in this file');
  else if (path !== null) logger.info({ path }, 'admin token read from file');

  let closing: Promise<void> | null = null;
  return {
    gateway,
    admin,
    backends,
    adminToken: token,
    serviceUrl,
    metrics,
    mode,
    close: () => {
      closing ??= (async () => {
        await gateway.close();
        await admin.close();
        await backends.close();
      })();
      return closing;
    },
  };
}
