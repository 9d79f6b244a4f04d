import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Passwords never reach a log line: redact the fields that carry them. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', name = 'gateway'): Logger {
  return pino({
    name,
    level,
    redact: { paths: ['password', '*.password', 'Password', '*.Password', 'NuevaClave', 'AntiguaClave'], censor: '[redacted]' },
  });
}
