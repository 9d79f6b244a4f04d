import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Passwords never reach a log line: redact the fields that carry them. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', name = 'gateway', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: ['password', '*.password', 'Password', '*.Password', 'NuevaClave', 'AntiguaClave'], censor: '[redacted]' },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
