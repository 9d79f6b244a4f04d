import { InvalidArgumentError, type Command } from 'commander';
import { action, clientOf, jsonOutput, positiveInt } from './common.js';
import { ImportFileError } from './import-file.js';
import { importFile } from './import.js';
import { DECLARABLE_ENCODINGS, type ImportEncoding } from './import-text.js';
import { eventLine, overviewText, refusalsText } from './render.js';

const STATES = ['pending', 'in_process', 'succeeded', 'failed', 'expired', 'cancelled'];

/** `commands list --state`: refused before any request when it is not a state the store knows. */
export function stateArg(value: string): string {
  if (!STATES.includes(value)) throw new InvalidArgumentError(`must be one of ${STATES.join(', ')}.`);
  return value;
}

function encodingArg(value: string): ImportEncoding {
  const known = DECLARABLE_ENCODINGS.find((e) => e === value.toLowerCase().replace(/^utf8$/, 'utf-8').replace(/^cp1252$/, 'windows-1252'));
  if (known === undefined) throw new InvalidArgumentError(`must be one of ${DECLARABLE_ENCODINGS.join(', ')}.`);
  return known;
}

function formatArg(value: string): 'csv' | 'jsonl' {
  if (value !== 'csv' && value !== 'jsonl') throw new InvalidArgumentError('must be csv or jsonl.');
  return value;
}

/** Adds `providers delete` to the providers command. */
export function addProviderDelete(providers: Command): void {
  providers
    .command('delete <systemUser>')
    .description('delete a provider: ends its sessions, cancels its unfinished commands, empties its trip, lifts its lockouts; its stored events stay')
    .requiredOption('--confirm <systemUser>', 'the same SystemUser again, so a typo cannot delete another provider')
    .action(action(async (systemUser: string, opts: { confirm: string }, cmd: Command) => clientOf(cmd).deleteProvider(systemUser, opts.confirm)));
}

/** `commands cancel` and the paging form of `commands list`. */
export function addCommandOperations(commands: Command): void {
  commands
    .command('cancel <systemUser> <numero>')
    .description('cancel a queued or delivered command: it is never handed out again')
    .action(
      action(async (systemUser: string, numero: string, _opts: unknown, cmd: Command) => clientOf(cmd).cancelCommand(systemUser, positiveInt(numero))),
    );
}

export function addOperatorCommands(program: Command): void {
  const lockouts = program.command('lockouts').description('see and lift lockouts of failed logins');
  lockouts
    .command('list')
    .description('locks in force (address null: the SystemUser is locked from every address)')
    .action(action(async (_opts: unknown, cmd: Command) => clientOf(cmd).lockouts()));
  lockouts
    .command('lift <systemUser>')
    .description('lift every lock of the SystemUser and forget its failures')
    .action(
      action(async (systemUser: string, _opts: unknown, cmd: Command) => {
        await clientOf(cmd).liftLockouts(systemUser);
        return { lifted: systemUser };
      }),
    );

  const poison = program.command('poison').description('messages the worker set aside (scale-out)');
  poison
    .command('list')
    .description('newest first, with the reason and the value (cut to 4 KB)')
    .option('--limit <n>', 'how many (default 100, max 1000)', positiveInt)
    .action(action(async (opts: { limit?: number }, cmd: Command) => clientOf(cmd).poison(opts.limit)));
  poison
    .command('redrive <id>')
    .description('put the message back on the topic for the worker (after fixing what made it fail)')
    .action(action(async (id: string, _opts: unknown, cmd: Command) => clientOf(cmd).redrivePoison(id)));
  poison
    .command('discard <id>')
    .description('drop the message for good')
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        await clientOf(cmd).discardPoison(id);
        return { discarded: id };
      }),
    );

  program
    .command('overview')
    .description('mode, readiness, backends, events per second, worker lag, poison messages, lockouts')
    .action(action(async (_opts: unknown, cmd: Command) => clientOf(cmd).overview(), overviewText));

  program
    .command('refusals')
    .description("why providers' calls were refused (each -1…-6, false and fault, with its reason), newest first; kept in the gateway's memory")
    .option('--provider <systemUser>', 'only this SystemUser')
    .option('--limit <n>', 'how many (default 100, max 1000)', positiveInt)
    .action(
      action(
        async (opts: { provider?: string; limit?: number }, cmd: Command) =>
          clientOf(cmd).refusals({ ...(opts.provider === undefined ? {} : { provider: opts.provider }), ...(opts.limit === undefined ? {} : { limit: opts.limit }) }),
        refusalsText,
      ),
    );

  const imports = program.command('import').description('move an installation over from the legacy service (docs/migration.md)');
  for (const kind of ['providers', 'trips'] as const) {
    imports
      .command(`${kind} <file>`)
      .description(
        kind === 'providers'
          ? 'providers from CSV (header: systemUser,password[,timeZone,enabled,requireRegisteredVehicles]) or JSON lines; idempotent'
          : 'vehicles on trips from CSV (header: systemUser,dominio,nroSerie) or JSON lines; idempotent',
      )
      .option('--format <format>', 'csv or jsonl (default: by extension, else by content)', formatArg)
      .option(
        '--encoding <encoding>',
        'utf-8, windows-1252 or latin1 (default: a BOM decides, else UTF-8 when the start of the file is valid UTF-8, else windows-1252)',
        encodingArg,
      )
      .option('--report <file>', 'where the per-line outcomes go, as JSON lines (default: <file>.report.jsonl)')
      .action(
        action(async (file: string, opts: { format?: 'csv' | 'jsonl'; encoding?: ImportEncoding; report?: string }, cmd: Command) => {
          try {
            const summary = await importFile(clientOf(cmd), kind, file, {
              ...(opts.format === undefined ? {} : { format: opts.format }),
              ...(opts.encoding === undefined ? {} : { encoding: opts.encoding }),
              ...(opts.report === undefined ? {} : { report: opts.report }),
              progress: (done) => process.stderr.write(`${kind}: ${done} lines sent\n`),
            });
            if (summary.failed > 0) process.exitCode = 1;
            return summary;
          } catch (err) {
            if (err instanceof ImportFileError) throw new Error(`${file}: ${err.message} Nothing was imported.`, { cause: err });
            throw err;
          }
        }),
      );
  }
}

/** `events --follow`: one line per event (a JSON line with --json) until Ctrl-C. */
export async function followEvents(cmd: Command, filter: { provider?: string; dominio?: string }): Promise<void> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await clientOf(cmd).followEvents(
      filter,
      (event) => process.stdout.write(`${jsonOutput(cmd) ? JSON.stringify(event) : eventLine(event)}\n`),
      abort.signal,
      // On stderr, so stdout stays one event per line.
      (events) => process.stderr.write(`${events} events stored meanwhile were left out of the live stream (its rate cap); GET /admin/events has them all.\n`),
    );
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

