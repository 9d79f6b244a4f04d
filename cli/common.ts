import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { ADMIN_TOKEN_FILE } from '../gateway/admin/auth.js';
import { AdminApiError, AdminClient } from '../gateway/admin/client.js';
import { errorMessage } from '../shared/util/error-message.js';
import { human } from './render.js';

/** What every CLI command shares: finding the API, printing, exit codes. */

interface GlobalOptions {
  url?: string;
  token?: string;
  ca?: string;
  json?: boolean;
}

/**
 * The token and passwords this run was given: no message the CLI prints may hold them (an error
 * quoting a header or a request body would), so `action` blanks them out of every error text.
 */
const secrets = new Set<string>();

/** Registers a secret of this run (a password read from an option or stdin). */
export function keepSecret(value: string): string {
  if (value.length >= 4) secrets.add(value);
  return value;
}

/** `text` with every secret of this run replaced. */
export function withoutSecrets(text: string): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  return out;
}

function defaultUrl(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_URL) return env.ADMIN_URL;
  const host = env.ADMIN_HOST || '127.0.0.1';
  // Where the gateway serves TLS (TLS_CERT_FILE set in the same environment), so does its admin API.
  const scheme = env.TLS_CERT_FILE ? 'https' : 'http';
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${env.ADMIN_PORT || '8081'}`;
}

/** A bearer token is one run of visible ASCII characters (RFC 6750's b64token and more; never a space or a line break). */
const TOKEN_SHAPE = /^[\x21-\x7e]+$/;

/**
 * The token as found, checked: a value that cannot be a bearer token (a file of several lines, a
 * space, a control character) is refused here, naming where it came from and never showing it.
 */
function checkedToken(token: string, source: string, file: string | null): string {
  if (TOKEN_SHAPE.test(token)) return keepSecret(token);
  keepSecret(token);
  const lines = token.split(/\r?\n/).length;
  const what = lines > 1 ? `holds ${lines} lines` : 'holds a space or a character a token cannot have';
  const hint =
    file !== null && lines > 1
      ? ' A token file holds the token alone: write it with `npx gateway-admin token create NAME --role ROLE > FILE` (`npm run admin` prints its own lines on stdout too).'
      : '';
  throw new Error(`${source} ${what}, so it is not a token.${hint}`);
}

/** --token, else ADMIN_TOKEN, else the file ADMIN_TOKEN_FILE names, else DATA_DIR/admin-token (as the gateway writes it); null if none. */
function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (flag) return checkedToken(flag, '--token', null);
  if (env.ADMIN_TOKEN) return checkedToken(env.ADMIN_TOKEN, 'ADMIN_TOKEN', null);
  if (env.ADMIN_TOKEN_FILE) {
    // As the gateway reads it: one trailing newline ignored. A file that cannot be read is an error, not "no token".
    let content: string;
    try {
      content = fs.readFileSync(path.resolve(env.ADMIN_TOKEN_FILE), 'utf8');
    } catch (err) {
      throw new Error(`ADMIN_TOKEN_FILE ${env.ADMIN_TOKEN_FILE} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}).`, { cause: err });
    }
    const token = content.replace(/\r?\n$/, '');
    if (token === '') throw new Error(`ADMIN_TOKEN_FILE ${env.ADMIN_TOKEN_FILE} is empty.`);
    return checkedToken(token, `ADMIN_TOKEN_FILE ${env.ADMIN_TOKEN_FILE}`, env.ADMIN_TOKEN_FILE);
  }
  const file = path.resolve(env.DATA_DIR || './data', ADMIN_TOKEN_FILE);
  let token: string;
  try {
    token = fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
  return token === '' ? null : checkedToken(token, file, file);
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

/** `--json`: the API's answers as they are, for scripts; otherwise tables and lines for a person. */
export function jsonOutput(command: Command): boolean {
  return command.optsWithGlobals<GlobalOptions>().json === true;
}

export function print(value: unknown, command: Command, forPerson: (value: unknown) => string = human): void {
  process.stdout.write(jsonOutput(command) ? `${JSON.stringify(value, null, 2)}\n` : `${forPerson(value)}\n`);
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

/**
 * Wraps an action: prints its result (`forPerson` shapes it unless --json), maps failures to one
 * message on stderr and exit code 1. No message holds the token or a password of this run.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<unknown>, forPerson?: (value: unknown) => string): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const result = await fn(...args);
      const command = args[args.length - 1] as Command;
      if (result !== undefined) print(result, command, forPerson);
    } catch (err) {
      let message: string;
      if (err instanceof AdminApiError) message = `Error (HTTP ${err.status}): ${err.message}`;
      else message = `Error: ${errorMessage(err)}`;
      process.stderr.write(`${withoutSecrets(message)}\n`);
      process.exitCode = 1;
    }
  };
}
