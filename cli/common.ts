import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { ADMIN_TOKEN_FILE } from '../gateway/admin/auth.js';
import { AdminApiError, AdminClient, AdminUnreachableError } from '../gateway/admin/client.js';
import { errorMessage } from '../shared/util/error-message.js';

/** What every CLI command shares: finding the API, printing, exit codes. */

interface GlobalOptions {
  url?: string;
  token?: string;
  ca?: string;
}

function defaultUrl(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_URL) return env.ADMIN_URL;
  const host = env.ADMIN_HOST || '127.0.0.1';
  // Where the gateway serves TLS (TLS_CERT_FILE set in the same environment), so does its admin API.
  const scheme = env.TLS_CERT_FILE ? 'https' : 'http';
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${env.ADMIN_PORT || '8081'}`;
}

/** --token, else ADMIN_TOKEN, else the file ADMIN_TOKEN_FILE names, else DATA_DIR/admin-token (as the gateway writes it); null if none. */
function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (flag) return flag;
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  if (env.ADMIN_TOKEN_FILE) {
    // As the gateway reads it: one trailing newline ignored. A file that cannot be read is an error, not "no token".
    const token = fs.readFileSync(path.resolve(env.ADMIN_TOKEN_FILE), 'utf8').replace(/\r?\n$/, '');
    if (token === '') throw new Error(`ADMIN_TOKEN_FILE ${env.ADMIN_TOKEN_FILE} is empty.`);
    return token;
  }
  const file = path.resolve(env.DATA_DIR || './data', ADMIN_TOKEN_FILE);
  try {
    const token = fs.readFileSync(file, 'utf8').trim();
    return token === '' ? null : token;
  } catch {
    return null;
  }
}

/** --ca, else ADMIN_CA_FILE: the PEM CA an https:// admin API's certificate is checked against. */
function resolveCa(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const file = flag || env.ADMIN_CA_FILE;
  if (!file) return undefined;
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`Cannot read the CA file ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}).`, { cause: err });
  }
}

export function clientOf(command: Command): AdminClient {
  const opts = command.optsWithGlobals<GlobalOptions>();
  const ca = resolveCa(opts.ca, process.env);
  return new AdminClient({
    baseUrl: opts.url || defaultUrl(process.env),
    token: resolveToken(opts.token, process.env),
    ...(ca === undefined ? {} : { ca }),
  });
}

export function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive whole number.');
  return Number(value);
}

/** An event id: digits only (64-bit, so kept as text). */
export function eventId(value: string): string {
  if (!/^[1-9]\d{0,19}$/.test(value)) throw new InvalidArgumentError('must be an event id (a positive whole number).');
  return value;
}

/** Wraps an action: prints its result, maps failures to a message on stderr and exit code 1. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const result = await fn(...args);
      if (result !== undefined) print(result);
    } catch (err) {
      if (err instanceof AdminApiError) {
        process.stderr.write(`Error (HTTP ${err.status}): ${err.message}\n`);
      } else if (err instanceof AdminUnreachableError) {
        process.stderr.write(`Error: ${err.message}\n`);
      } else {
        process.stderr.write(`Error: ${errorMessage(err)}\n`);
      }
      process.exitCode = 1;
    }
  };
}
