#!/usr/bin/env node
/**
 * The operators' CLI (docs/protocol.md §Operators): `npm run admin -- <command>`. Every command is one call of
 * the admin JSON API, so it works the same against any deployment mode. Output is pretty JSON on
 * stdout; on failure the API's error goes to stderr and the exit code is 1.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ADMIN_TOKEN_FILE } from '../gateway/admin/auth.js';
import { AdminApiError, AdminClient, AdminUnreachableError } from '../gateway/admin/client.js';

interface GlobalOptions {
  url?: string;
  token?: string;
}

function defaultUrl(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_URL) return env.ADMIN_URL;
  const host = env.ADMIN_HOST || '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.ADMIN_PORT || '8081'}`;
}

/** --token, else ADMIN_TOKEN, else DATA_DIR/admin-token (as the gateway writes it); null if none. */
function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (flag) return flag;
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  const file = path.resolve(env.DATA_DIR || './data', ADMIN_TOKEN_FILE);
  try {
    const token = fs.readFileSync(file, 'utf8').trim();
    return token === '' ? null : token;
  } catch {
    return null;
  }
}

function clientOf(command: Command): AdminClient {
  const opts = command.optsWithGlobals<GlobalOptions>();
  return new AdminClient({
    baseUrl: opts.url || defaultUrl(process.env),
    token: resolveToken(opts.token, process.env),
  });
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `--password -` reads the password from stdin (one line; a trailing newline is dropped). */
async function passwordArg(value: string): Promise<string> {
  if (value !== '-') return value;
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  const text = Buffer.concat(chunks).toString('utf8');
  const firstLine = text.split(/\r?\n/)[0] ?? '';
  if (firstLine === '') throw new Error('No password on stdin.');
  return firstLine;
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive whole number.');
  return Number(value);
}

/** Wraps an action: prints its result, maps failures to a message on stderr and exit code 1. */
function action<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): (...args: A) => Promise<void> {
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
        process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
      }
      process.exitCode = 1;
    }
  };
}

function buildProgram(): Command {
  const program = new Command('admin')
    .description('Manage providers, commands and trips of the gateway through its admin API.')
    .option('--url <url>', 'admin API base URL (default: ADMIN_URL, else http://ADMIN_HOST:ADMIN_PORT)')
    .option('--token <token>', 'bearer token (default: ADMIN_TOKEN, else the file DATA_DIR/admin-token)')
    .showHelpAfterError('(add --help for usage)');

  // providers ---------------------------------------------------------------------------------
  const providers = program.command('providers').description('create, list, show and update providers');

  providers
    .command('create <systemUser>')
    .description('create a provider (enabled)')
    .requiredOption('--password <password>', 'initial password; "-" reads it from stdin')
    .option('--time-zone <zone>', "IANA zone for this provider's dateTimes without offset (default: service TIME_ZONE)")
    .option('--require-registered', 'refuse events (-4) for vehicles not registered on a trip of this provider')
    .action(
      action(async (systemUser: string, opts: { password: string; timeZone?: string; requireRegistered?: boolean }, cmd: Command) =>
        clientOf(cmd).createProvider({
          systemUser,
          password: await passwordArg(opts.password),
          ...(opts.timeZone === undefined ? {} : { timeZone: opts.timeZone }),
          ...(opts.requireRegistered ? { requireRegisteredVehicles: true } : {}),
        }),
      ),
    );

  providers
    .command('list')
    .description('list all providers')
    .action(action(async (_opts: unknown, cmd: Command) => clientOf(cmd).listProviders()));

  providers
    .command('show <systemUser>')
    .description('show one provider')
    .action(action(async (systemUser: string, _opts: unknown, cmd: Command) => clientOf(cmd).getProvider(systemUser)));

  providers
    .command('update <systemUser>')
    .description('change password, enabled flag, time zone or registered-vehicles rule of a provider')
    .option('--password <password>', 'new password; "-" reads it from stdin (also lifts a lockout)')
    .addOption(new Option('--enable', 'enable the provider').conflicts('disable'))
    .addOption(new Option('--disable', 'disable the provider (its logins fail)').conflicts('enable'))
    .option('--time-zone <zone>', "IANA zone for this provider's dateTimes without offset")
    .option('--no-time-zone', "use the service's TIME_ZONE again")
    .option('--require-registered', 'refuse events for vehicles not registered on a trip')
    .option('--no-require-registered', 'accept events for any vehicle')
    .action(
      action(
        async (
          systemUser: string,
          opts: { password?: string; enable?: boolean; disable?: boolean; timeZone?: string | false; requireRegistered?: boolean },
          cmd: Command,
        ) => {
          const patch: { password?: string; enabled?: boolean; timeZone?: string | null; requireRegisteredVehicles?: boolean } = {};
          if (opts.password !== undefined) patch.password = await passwordArg(opts.password);
          if (opts.enable) patch.enabled = true;
          if (opts.disable) patch.enabled = false;
          if (opts.timeZone !== undefined) patch.timeZone = opts.timeZone === false ? null : opts.timeZone;
          if (opts.requireRegistered !== undefined) patch.requireRegisteredVehicles = opts.requireRegistered;
          return clientOf(cmd).updateProvider(systemUser, patch);
        },
      ),
    );

  // commands ----------------------------------------------------------------------------------
  const commands = program.command('commands').description('queue and list device commands of a provider');

  commands
    .command('queue <systemUser>')
    .description('queue a command; the provider gets it from ObtenerComando')
    .requiredOption('--cmd <code>', 'command code, e.g. CC')
    .requiredOption('--unidad <plate>', 'vehicle plate (UNIDAD)')
    .requiredOption('--equipo <device>', 'device id (EQUIPO)')
    .action(
      action(async (systemUser: string, opts: { cmd: string; unidad: string; equipo: string }, cmd: Command) =>
        clientOf(cmd).queueCommand(systemUser, { cmd: opts.cmd, unidad: opts.unidad, equipo: opts.equipo }),
      ),
    );

  commands
    .command('list <systemUser>')
    .description("list a provider's commands with their state and history")
    .action(action(async (systemUser: string, _opts: unknown, cmd: Command) => clientOf(cmd).listCommands(systemUser)));

  // trip --------------------------------------------------------------------------------------
  const trip = program.command('trip').description("manage the vehicles on a provider's active trip");

  trip
    .command('add <systemUser> <dominio>')
    .description('register a vehicle on the trip (re-registering updates its NroSerie)')
    .requiredOption('--nro-serie <serial>', 'device serial number (NroSerie)')
    .action(
      action(async (systemUser: string, dominio: string, opts: { nroSerie: string }, cmd: Command) =>
        clientOf(cmd).addVehicle(systemUser, dominio, opts.nroSerie),
      ),
    );

  trip
    .command('remove <systemUser> <dominio>')
    .description('remove a vehicle from the trip')
    .action(
      action(async (systemUser: string, dominio: string, _opts: unknown, cmd: Command) => {
        await clientOf(cmd).removeVehicle(systemUser, dominio);
        return { removed: true, systemUser, dominio };
      }),
    );

  trip
    .command('list <systemUser>')
    .description('list the vehicles on the trip, with their last report')
    .action(action(async (systemUser: string, _opts: unknown, cmd: Command) => clientOf(cmd).listVehicles(systemUser)));

  // events, health, metrics -------------------------------------------------------------------
  program
    .command('events')
    .description('show the latest stored events, newest first')
    .option('--provider <systemUser>', 'only this provider')
    .option('--dominio <dominio>', 'only this vehicle')
    .option('--limit <n>', 'how many (default 100, max 1000)', positiveInt)
    .action(
      action(async (opts: { provider?: string; dominio?: string; limit?: number }, cmd: Command) =>
        clientOf(cmd).events({
          ...(opts.provider === undefined ? {} : { provider: opts.provider }),
          ...(opts.dominio === undefined ? {} : { dominio: opts.dominio }),
          ...(opts.limit === undefined ? {} : { limit: opts.limit }),
        }),
      ),
    );

  program
    .command('health')
    .description('check liveness and readiness (no token needed); exit code 1 when not ready')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const health = await clientOf(cmd).health();
        if (!health.ready) process.exitCode = 1;
        return health;
      }),
    );

  program
    .command('metrics')
    .description('print the metrics text, if the gateway exposes it')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        process.stdout.write(await clientOf(cmd).metrics());
        return undefined;
      }),
    );

  return program;
}

await buildProgram().parseAsync(process.argv);
