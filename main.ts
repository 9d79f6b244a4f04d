/**
 * `npm start`: the whole service in one process on the embedded store (DATA_DIR), for a
 * newcomer's first run and for small deployments. Configuration: environment, see README.md.
 */
import { ConfigError, loadConfig } from './shared/config.js';
import { createLogger } from './shared/logger.js';
import { startApplication } from './gateway/app.js';
import { nativeBinaryPath } from './gateway/http/uws.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  if (nativeBinaryPath() === null) logger.warn('uWebSockets.js native binary not loaded: running on the slow fallback');

  const app = await startApplication({ config, logger });
  logger.info(
    {
      service: app.serviceUrl,
      wsdl: `${app.serviceUrl}?wsdl`,
      admin: app.admin.url,
      dataDir: config.dataDir,
      mode: 'embedded',
    },
    `provider service listening: ${app.serviceUrl} (WSDL ${app.serviceUrl}?wsdl, admin ${app.admin.url})`,
  );

  const stop = (signal: string): void => {
    logger.info({ signal }, 'shutting down: draining in-flight requests and flushing the event log');
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
