import { pino, symbols, type DestinationStream, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';
import { secretNames } from '../catalogue/index.js';

export type { Logger };

/** LOG_FORMAT: JSON lines for machines, one readable line per entry for a person, or by whether stdout is a terminal. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Every field a password can travel in: the catalogue's `secret` parameters (Password,
 * AntiguaClave, NuevaClave) and the admin API's `password`, at the top of a log object or one level down.
 */
const REDACTED_PATHS = [...new Set(['password', ...secretNames])].flatMap((name) => [name, `*.${name}`]);

interface LoggerOptions {
  /** Where lines go (default stdout). A destination always gets JSON lines. */
  destination?: DestinationStream;
  format?: LogFormat;
}

/** Pretty when asked, or when `auto` and stdout is a terminal; JSON otherwise. */
export function prettyLogs(format: LogFormat, stdoutIsTerminal = process.stdout.isTTY): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTerminal);
}

/**
 * A child's bindings are written after its parent's, so binding a key the parent already bound
 * (`component` of the admin server, then of its audit trail) wrote the key twice in one JSON
 * object, which strict readers reject. Each child keeps one value per key, its own.
 */
function onChild(child: Logger): void {
  const chindings = (child as unknown as Record<symbol, unknown>)[symbols.chindingsSym];
  if (typeof chindings !== 'string' || chindings === '') return;
  const bound = JSON.parse(`{${chindings.slice(1)}}`) as Record<string, unknown>;
  const rewritten = Object.entries(bound)
    .map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join('');
  if (rewritten.length !== chindings.length) (child as unknown as Record<symbol, string>)[symbols.chindingsSym] = rewritten;
}

/**
 * Structured logs: JSON lines (LOG_FORMAT=json, and whenever stdout is not a terminal), or one
 * readable line each (pino-pretty; LOG_FORMAT=pretty, or a terminal with the default `auto`).
 * Passwords never reach a log line: the fields that carry them are redacted.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', name = 'gateway', options: LoggerOptions = {}): Logger {
  const pinoOptions = {
    name,
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    onChild,
  };
  if (options.destination !== undefined) return pino(pinoOptions, options.destination);
  if (!prettyLogs(options.format ?? 'auto')) return pino(pinoOptions);
  const pretty = PinoPretty({
    // Synchronous, as pino's own stdout is: the line a failing start writes is out before it exits.
    sync: true,
    singleLine: true,
    colorize: process.stdout.isTTY,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name',
  });
  return pino(pinoOptions, pretty);
}
