#!/usr/bin/env node
/**
 * The operators' CLI (docs/protocol.md §Operators): `npm run admin -- <command>`, or `npx gateway-admin
 * <command>` (bin/gateway-admin.js), which prints nothing of npm's own. Every command is one call
 * of the admin JSON API, so it works the same against any deployment mode. Output is tables and
 * lines for a person, or with `--json` the API's answer as it is; on failure one message goes to
 * stderr (never holding the token or a password) and the exit code is 1.
 */
import { Command, Option } from 'commander';
import { addAccessCommands } from './access.js';
import { action, clientOf, eventId, keepSecret, positiveInt } from './common.js';
import { eventsTable } from './render.js';
import { addCommandOperations, addOperatorCommands, addProviderDelete, followEvents, stateArg } from './operators.js';

/** `--password -` reads the password from stdin (one line; a trailing newline is dropped). */
async function passwordArg(value: string): Promise<string> {
  if (value !== '-') return keepSecret(value);
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  const text = Buffer.concat(chunks).toString('utf8');
  const firstLine = text.split(/\r?\n/)[0] ?? '';
  if (firstLine === '') throw new Error('No password on stdin.');
  return keepSecret(firstLine);
}

function buildProgram(): Command {
  const program = new Command('admin')
    .description('Operate the gateway through its admin API: providers, commands, trips, events, lockouts, poison messages, imports.')
    .option('--url <url>', 'admin API base URL (default: ADMIN_URL, else http://ADMIN_HOST:ADMIN_PORT)')
    .option('--token <token>', 'bearer token (default: ADMIN_TOKEN, else the file ADMIN_TOKEN_FILE, else DATA_DIR/admin-token)')
    .option('--ca <file>', 'PEM CA to trust for an https:// admin API (default: ADMIN_CA_FILE, else the system CAs)')
    .option('--json', "print the API's answers as JSON (for scripts) instead of tables")
    .showHelpAfterError('(add --help for usage)');

  // providers ---------------------------------------------------------------------------------
  const providers = program.command('providers').description('create, list, show, update and delete providers');

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

  addProviderDelete(providers);

  // commands ----------------------------------------------------------------------------------
  const commands = program.command('commands').description('queue, list and cancel device commands');

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
    .command('list [systemUser]')
    .description("a provider's commands with state and history; without one, every provider's, newest first, a page at a time")
    .option('--provider <systemUser>', 'only this provider (paged)')
    .option('--state <state>', 'only commands in this state: pending, in_process, succeeded, failed, expired, cancelled', stateArg)
    .option('--limit <n>', 'page size (default 100, max 1000)', positiveInt)
    .option('--before-numero <n>', 'the page below this NUMERO (nextBeforeNumero of the previous page)', positiveInt)
    .action(
      action(
        async (
          systemUser: string | undefined,
          opts: { provider?: string; state?: string; limit?: number; beforeNumero?: number },
          cmd: Command,
        ) => {
          const client = clientOf(cmd);
          if (systemUser !== undefined && opts.provider === undefined && opts.state === undefined && opts.limit === undefined && opts.beforeNumero === undefined) {
            return client.listCommands(systemUser);
          }
          const provider = opts.provider ?? systemUser;
          return client.commandsPage({
            ...(provider === undefined ? {} : { provider }),
            ...(opts.state === undefined ? {} : { state: opts.state }),
            ...(opts.limit === undefined ? {} : { limit: opts.limit }),
            ...(opts.beforeNumero === undefined ? {} : { beforeNumero: opts.beforeNumero }),
          });
        },
      ),
    );
  addCommandOperations(commands);

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
    .description('list the vehicles on the trip, with their last report (a page at a time, by Dominio)')
    .option('--limit <n>', 'how many (default 100, max 1000)', positiveInt)
    .option('--after <dominio>', 'the page after this Dominio (nextAfter of the previous page)')
    .action(
      action(async (systemUser: string, opts: { limit?: number; after?: string }, cmd: Command) =>
        clientOf(cmd).listVehicles(systemUser, { limit: opts.limit, after: opts.after }),
      ),
    );

  // events, health, metrics -------------------------------------------------------------------
  program
    .command('events')
    .description('stored events, newest first (a page at a time), or --follow for new ones as they are stored')
    .option('--provider <systemUser>', 'only this provider')
    .option('--dominio <dominio>', 'only this vehicle')
    .option('--limit <n>', 'how many (default 100, max 1000)', positiveInt)
    .option('--before-id <id>', 'the page below this id (nextBeforeId of the previous page)', eventId)
    .option('--follow', 'print each newly stored event as a line (with --json: a JSON line) until Ctrl-C')
    .action(
      action(async (opts: { provider?: string; dominio?: string; limit?: number; beforeId?: string; follow?: boolean }, cmd: Command) => {
        const filter = {
          ...(opts.provider === undefined ? {} : { provider: opts.provider }),
          ...(opts.dominio === undefined ? {} : { dominio: opts.dominio }),
        };
        if (opts.follow) {
          await followEvents(cmd, filter);
          return undefined;
        }
        return clientOf(cmd).events({
          ...filter,
          ...(opts.limit === undefined ? {} : { limit: opts.limit }),
          ...(opts.beforeId === undefined ? {} : { beforeId: opts.beforeId }),
        });
      }, eventsTable),
    );

  addOperatorCommands(program);
  addAccessCommands(program);

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
