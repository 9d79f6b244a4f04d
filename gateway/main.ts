/**
 * `npm run gateway`: one stateless gateway of the scale-out deployment (REDIS_URL and
 * KAFKA_BROKERS required; CLICKHOUSE_URL for the admin API's event queries). Run as many as you
 * like behind a load balancer. For the all-in-one embedded service use `npm start`.
 */
import { ConfigurationMissing, deploymentMode } from '../shared/config/index.js';
import { runProcess } from '../shared/runtime/process.js';
import { startApplication, warnOnFallback } from './app.js';

runProcess('gateway', async (config, logger) => {
  if (deploymentMode(config) !== 'scale-out') {
    throw new ConfigurationMissing('npm run gateway needs REDIS_URL and KAFKA_BROKERS; `npm start` runs the embedded mode.');
  }
  const app = await startApplication({ config, logger });
  warnOnFallback(app, logger);
  logger.info(
    { service: app.serviceUrl, wsdl: `${app.serviceUrl}?wsdl`, admin: app.admin.url, mode: app.mode, threads: app.gateway.threads },
    `gateway listening: ${app.serviceUrl} (admin ${app.admin.url})`,
  );
  return app;
});
