/**
 * `npm start`: the whole service in one process. With no service configured it runs on the
 * embedded store under DATA_DIR (a newcomer's first run, small deployments). With REDIS_URL and
 * KAFKA_BROKERS it is a scale-out gateway, and with CLICKHOUSE_URL too it also runs the worker.
 * Configuration: environment variables, see docs/configuration.md.
 */
import { startApplication, warnOnFallback } from './gateway/app.js';
import { Metrics } from './shared/runtime/metrics.js';
import { runProcess, type Running } from './shared/runtime/process.js';
import { startWorkerProcess } from './worker/process.js';

runProcess('gateway', async (config, logger) => {
  const metrics = new Metrics();
  const app = await startApplication({ config, logger, metrics });
  warnOnFallback(app, logger);
  let worker: Running | null = null;
  if (app.mode === 'scale-out' && config.clickhouse.url !== null) {
    worker = await startWorkerProcess(config, logger, metrics, { probes: false });
  }
  logger.info(
    {
      service: app.serviceUrl,
      wsdl: `${app.serviceUrl}?wsdl`,
      admin: app.admin.url,
      mode: app.mode,
      threads: app.gateway.threads,
      ...(app.mode === 'embedded' ? { dataDir: config.embedded.dataDir } : { worker: worker !== null }),
    },
    `provider service listening: ${app.serviceUrl} (WSDL ${app.serviceUrl}?wsdl, admin ${app.admin.url})`,
  );
  logger.info(
    { console: `${app.admin.url}/` },
    `operators' console: ${app.admin.url}/ (sign in with ${app.adminTokenFile === null ? 'ADMIN_TOKEN' : `the token in ${app.adminTokenFile}`}, or an operator's own token)`,
  );
  return {
    close: async () => {
      await app.close();
      await worker?.close();
    },
    failed: app.failed,
    reloadTls: () => app.reloadTls(),
  };
});
