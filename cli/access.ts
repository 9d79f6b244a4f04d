import { InvalidArgumentError, type Command } from 'commander';
import { AdminApiError } from '../gateway/admin/client.js';
import { action, clientOf, jsonOutput, positiveInt } from './common.js';

const ROLES = ['viewer', 'operator', 'admin'];
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

function roleArg(value: string): string {
  if (!ROLES.includes(value)) throw new InvalidArgumentError(`must be one of ${ROLES.join(', ')}.`);
  return value;
}

/** `30d`, `12h`, `90m`: how long from now. */
export function durationArg(value: string): number {
  const m = /^(\d{1,6})([mhd])$/.exec(value);
  if (m === null || Number(m[1]) === 0) throw new InvalidArgumentError('must be a number of minutes, hours or days, e.g. 90m, 12h, 30d.');
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** An ISO-8601 time with a zone, or a duration back from now (`24h` = since a day ago). */
function sinceArg(value: string): string {
  if (/^\d+[mhd]$/.test(value)) return new Date(Date.now() - durationArg(value)).toISOString();
  if (!/(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError('must be an ISO-8601 time with a zone (2026-11-27T10:00:00Z) or a duration back from now (24h, 7d).');
  }
  return value;
}

/** `whoami`, `token create|list|revoke` and `audit list` (docs/admin-api.md §Identities and roles). */
export function addAccessCommands(program: Command): void {
  program
    .command('whoami')
    .description('the identity and role of the token in use, and the routes it may call')
    .action(action(async (_opts: unknown, cmd: Command) => clientOf(cmd).whoami()));

  const token = program.command('token').description("operators' named tokens (admin role)");
  token
    .command('create <name>')
    .description('issue a token: it goes to stdout alone (`npx gateway-admin token create ana ... > ana.token`, then ADMIN_TOKEN_FILE=ana.token), shown this once; only its hash is stored')
    .requiredOption('--role <role>', 'viewer, operator or admin', roleArg)
    .option('--expires-in <duration>', 'valid for this long: 90m, 12h, 30d (default: until revoked)', durationArg)
    .option('--replace', 'revoke the token of this name first, if there is one (rotating it)')
    .action(
      action(async (name: string, opts: { role: string; expiresIn?: number; replace?: boolean }, cmd: Command) => {
        const client = clientOf(cmd);
        if (opts.replace === true) {
          try {
            await client.revokeToken(name);
            process.stderr.write(`The earlier token ${name} is revoked.\n`);
          } catch (err) {
            if (!(err instanceof AdminApiError && err.status === 404)) throw err;
          }
        }
        const created = (await client.createToken({
          name,
          role: opts.role,
          ...(opts.expiresIn === undefined ? {} : { expiresAt: new Date(Date.now() + opts.expiresIn).toISOString() }),
        })) as { token: string } & Record<string, unknown>;
        const { token: secret, ...about } = created;
        const summary = jsonOutput(cmd)
          ? JSON.stringify(about, null, 2)
          : `Token ${String(about.name)} created for the ${String(about.role)} role${typeof about.expiresAt === 'string' ? `, valid until ${about.expiresAt}` : ', valid until revoked'}.`;
        process.stderr.write(`${summary}\nThe token is on stdout; it is not shown again (only its hash is stored).\n`);
        process.stdout.write(`${secret}\n`);
        return undefined;
      }),
    );
  token
    .command('list')
    .description('every token: name, role, creator, created, last used, expiry (never the token)')
    .action(action(async (_opts: unknown, cmd: Command) => clientOf(cmd).listTokens()));
  token
    .command('revoke <name>')
    .description('revoke a token: the next request with it is refused, on every gateway')
    .action(
      action(async (name: string, _opts: unknown, cmd: Command) => {
        await clientOf(cmd).revokeToken(name);
        return { revoked: name };
      }),
    );

  const audit = program.command('audit').description('the audit trail of admin calls (admin role)');
  audit
    .command('list')
    .description('who did what, newest first, a page at a time (nextBefore continues)')
    .option('--since <time>', 'entries from this time: ISO-8601 with a zone, or 24h, 7d back from now', sinceArg)
    .option('--identity <name>', "only this identity's calls (bootstrap = ADMIN_TOKEN)")
    .option('--target <target>', 'only calls about this target and what is under it, e.g. provider/acme, token/ana')
    .option('--provider <systemUser>', 'only calls about this provider, its commands and vehicles')
    .option('--limit <n>', 'page size (default 100, max 1000)', positiveInt)
    .option('--before <id>', 'the page below this entry id (nextBefore of the previous page)', positiveInt)
    .action(
      action(
        async (opts: { since?: string; identity?: string; target?: string; provider?: string; limit?: number; before?: number }, cmd: Command) => {
          if (opts.target !== undefined && opts.provider !== undefined) throw new Error('Give --target or --provider, not both.');
          const target = opts.provider === undefined ? opts.target : `provider/${encodeURIComponent(opts.provider)}`;
          return clientOf(cmd).audit({
            ...(opts.since === undefined ? {} : { since: opts.since }),
            ...(opts.identity === undefined ? {} : { identity: opts.identity }),
            ...(target === undefined ? {} : { target }),
            ...(opts.limit === undefined ? {} : { limit: opts.limit }),
            ...(opts.before === undefined ? {} : { before: opts.before }),
          });
        },
      ),
    );
}
