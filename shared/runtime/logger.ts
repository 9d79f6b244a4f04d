import { pino, type DestinationStream, type Logger } from 'pino';
import { secretNames } from '../catalogue/index.js';

export type { Logger };

/**
 * Every field a password can travel in: the catalogue's `secret` parameters (Password,
 * AntiguaClave, NuevaClave) and the admin API's `password`, at the top of a log object or one level down.
 */
const REDACTED_PATHS = [...new Set(['password', ...secretNames])].flatMap((name) => [name, `*.${name}`]);

/** Structured JSON logs. Passwords never reach a log line: redact the fields that carry them. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', name = 'gateway', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
