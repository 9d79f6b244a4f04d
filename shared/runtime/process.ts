import { ConfigError, ConfigurationMissing, describeConfig, loadConfig, type Config } from '../config/index.js';
import { restoreFastStringPrototype } from './fast-string-prototype.js';
import { createLogger, type Logger } from './logger.js';
import { StartError } from './start-error.js';
import { errorMessage } from '../util/error-message.js';

export interface Running {
  /** Graceful stop: stop accepting, finish in-flight work, flush, commit, disconnect. */
  close(): Promise<void>;
  /** Resolves if a part of the process failed for good (a front-end thread): it stops as on SIGTERM, then exits 1. */
  failed?: Promise<unknown>;
  /** SIGHUP: read the TLS certificate and key again, keeping open connections (rejects, serving the old one, on bad files). */
  reloadTls?(): Promise<void>;
}

/** How long a process that stops after a failure may drain before it exits anyway. */
const FAILURE_EXIT_MS = 20_000;

/**
 * The shape every entry point shares: configuration from the environment (a clear message and
 * exit 2 when it is wrong), structured logs, and SIGTERM/SIGINT draining before exit. With
 * `--config` it prints every setting it would run with (secrets only as set or unset) and exits.
 */
export function runProcess(name: string, start: (config: Config, logger: Logger) => Promise<Running>): void {
  // Every module of the entry point is loaded by now: undo what ioredis's loading did to string speed.
  restoreFastStringPrototype();
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error${err.message.includes('\n') ? 's' : ''}: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (process.argv.includes('--config')) {
    process.stdout.write(describeConfig(config));
    process.exit(0);
  }
  const logger = createLogger(config.log.level, name, { format: config.log.format });
  start(config, logger).then(
    (running) => {
      let stopping = false;
      const stop = (signal: string, exitCode = 0): void => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, 'shutting down: draining in-flight work');
        // A process stopping because a part of it failed must exit even if that part never closes.
        if (exitCode !== 0) setTimeout(() => process.exit(exitCode), FAILURE_EXIT_MS);
        running.close().then(
          () => {
            logger.info('stopped');
            process.exit(exitCode);
          },
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGHUP', () => {
        if (running.reloadTls === undefined) return;
        running.reloadTls().then(
          () => logger.info('TLS certificate reloaded'),
          (err: unknown) => logger.error({ reason: errorMessage(err) }, 'TLS certificate not reloaded; the previous one is still served'),
        );
      });
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
      void running.failed?.then(() => stop('failure', 1));
    },
    (err: unknown) => {
      logStartFailure(logger, name, err);
      process.exit(1);
    },
  );
}

/**
 * A start failure is one line: what failed, the setting and what to do when the error knows them
 * (StartError, ConfigurationMissing), else the error's own message. The error with its stack and
 * cause chain goes first, at debug level (LOG_LEVEL=debug), so the one line stays the last.
 */
export function logStartFailure(logger: Logger, name: string, err: unknown): void {
  logger.debug({ err }, `${name} start failure, in full`);
  if (err instanceof StartError) logger.fatal({ setting: err.setting }, `${name} cannot start: ${err.message}`);
  else if (err instanceof ConfigurationMissing) logger.fatal(`${name} cannot start: ${err.message}`);
  else logger.fatal(`${name} failed to start: ${errorMessage(err)} (LOG_LEVEL=debug logs the cause)`);
}
