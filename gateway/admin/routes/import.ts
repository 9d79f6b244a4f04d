import { auditTarget, type AuditDetail } from '../../../shared/backends/operators.js';
import type { Provider, ProviderPatch, TripVehicle } from '../../../shared/backends/types.js';
import { MAX_LENGTH } from '../../../shared/catalogue/index.js';
import { hashPassword, verifyPassword } from '../../../shared/domain/passwords.js';
import { invalid } from '../errors.js';
import type { JsonValue } from '../http.js';
import type { AdminDeps, Handler, Route } from '../route.js';
import { dominioOf, onlyFields, optionalBoolean, plainText, requiredText, systemUserOf, timeZoneOf } from '../validate.js';
import { errorMessage } from '../../../shared/util/error-message.js';

/** Lines per call at most; the CLI sends fewer providers per call (each costs a password hash). */
const IMPORT_MAX_LINES = 1000;
/** Import bodies are larger than the other routes' (1000 lines). */
const IMPORT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
/**
 * Password hashes running at once. scrypt runs on libuv's thread pool (4 threads), which the
 * gateway's own logins share: an import must not take all of it.
 */
const HASH_CONCURRENCY = 2;

type Outcome = 'created' | 'updated' | 'unchanged' | 'failed';
interface LineResult {
  line: number;
  outcome: Outcome;
  reason?: string;
}

/** The lines of an import body, each an object with a positive `line`; a 400 for the body as a whole. */
function linesOf(body: Record<string, unknown>, field: 'providers' | 'trips'): { line: number; entry: Record<string, unknown> }[] {
  onlyFields(body, [field]);
  const items = body[field];
  if (!Array.isArray(items)) throw invalid(field, `${field} must be a list.`);
  if (items.length > IMPORT_MAX_LINES) throw invalid(field, `At most ${IMPORT_MAX_LINES} ${field} per call, got ${items.length}; send them in chunks.`);
  return items.map((item: unknown, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw invalid(field, `${field}[${i}] must be an object.`);
    const entry = item as Record<string, unknown>;
    const line = entry.line;
    if (typeof line !== 'number' || !Number.isSafeInteger(line) || line < 1) throw invalid(field, `${field}[${i}].line must be a whole number of at least 1.`);
    return { line, entry };
  });
}

/** The field names the lines carry (the audit trail's `changes`; never their values), bounded. */
function fieldsOf(lines: readonly { entry: Record<string, unknown> }[]): string[] {
  const names = new Set<string>();
  for (const { entry } of lines) for (const k of Object.keys(entry)) if (k !== 'line' && names.size < 16) names.add(k.slice(0, 64));
  return [...names];
}


/** Runs `work` on each group, `concurrency` groups at a time; within a group, in order. */
async function inGroups<T>(groups: Iterable<T[]>, concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...groups];
  const workers = Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    for (let group = queue.shift(); group !== undefined; group = queue.shift()) for (const item of group) await work(item);
  });
  await Promise.all(workers);
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [item]);
    else group.push(item);
  }
  return [...groups.values()];
}

interface ProviderLine {
  line: number;
  systemUser: string;
  password: string;
  timeZone?: string | null;
  enabled?: boolean;
  requireRegisteredVehicles?: boolean;
}

/**
 * Bulk upserts for moving an installation over (docs/migration.md). Idempotent: a line that matches
 * what is stored is `unchanged`; the password is compared with the stored hash, so a changed one is
 * `updated`. A bad line fails alone with its reason; the others are imported.
 *
 * Legacy passwords are taken as they are: PASSWORD_MIN_LENGTH applies to passwords chosen from now
 * on, and refusing an existing one would lock its provider out at the cut-over.
 */
export function importRoutes(deps: AdminDeps): Route[] {
  const { backends, clock, logger: log } = deps;

  function parseProvider(line: number, e: Record<string, unknown>): ProviderLine {
    onlyFields(e, ['line', 'systemUser', 'password', 'timeZone', 'enabled', 'requireRegisteredVehicles']);
    const systemUser = systemUserOf(requiredText(e, 'systemUser', MAX_LENGTH.systemUser));
    const password = e.password;
    if (typeof password !== 'string' || password === '') throw invalid('password', 'password is required.');
    if (password.length > MAX_LENGTH.password) throw invalid('password', `password must be at most ${MAX_LENGTH.password} characters.`);
    plainText(password, 'password');
    const enabled = optionalBoolean(e, 'enabled');
    const requireRegisteredVehicles = optionalBoolean(e, 'requireRegisteredVehicles');
    return {
      line,
      systemUser,
      password,
      ...(e.timeZone === undefined ? {} : { timeZone: timeZoneOf(e.timeZone) }),
      ...(enabled === undefined ? {} : { enabled }),
      ...(requireRegisteredVehicles === undefined ? {} : { requireRegisteredVehicles }),
    };
  }

  async function upsertProvider(p: ProviderLine): Promise<Outcome> {
    const now = clock();
    const existing: Provider | null = await backends.providers.get(p.systemUser);
    if (existing === null) {
      const created = await backends.providers.create({
        systemUser: p.systemUser,
        passwordHash: await hashPassword(p.password),
        enabled: p.enabled ?? true,
        timeZone: p.timeZone ?? null,
        requireRegisteredVehicles: p.requireRegisteredVehicles ?? false,
        createdAt: now,
        updatedAt: now,
      });
      if (created !== null) return 'created';
      // Created meanwhile by someone else: compare with that one instead.
      return upsertProvider(p);
    }
    const patch: ProviderPatch = {};
    if (!(await verifyPassword(p.password, existing.passwordHash))) patch.passwordHash = await hashPassword(p.password);
    if (p.timeZone !== undefined && p.timeZone !== existing.timeZone) patch.timeZone = p.timeZone;
    if (p.enabled !== undefined && p.enabled !== existing.enabled) patch.enabled = p.enabled;
    if (p.requireRegisteredVehicles !== undefined && p.requireRegisteredVehicles !== existing.requireRegisteredVehicles) {
      patch.requireRegisteredVehicles = p.requireRegisteredVehicles;
    }
    if (Object.keys(patch).length === 0) return 'unchanged';
    if ((await backends.providers.update(p.systemUser, patch, now)) === null) return upsertProvider(p);
    // As with PATCH: a new password lets the provider in again.
    if (patch.passwordHash !== undefined) await backends.lockouts.clear(p.systemUser);
    return 'updated';
  }

  const importProviders: Handler = async (req) => {
    req.audit.target = auditTarget('import', 'providers');
    const lines = linesOf(await req.body(), 'providers');
    req.audit.changes = fieldsOf(lines);
    const results = new Map<number, LineResult>();
    const valid: { i: number; p: ProviderLine }[] = [];
    lines.forEach(({ line, entry }, i) => {
      try {
        valid.push({ i, p: parseProvider(line, entry) });
      } catch (err) {
        results.set(i, { line, outcome: 'failed', reason: errorMessage(err) });
      }
    });
    // Lines of one SystemUser in file order (a later line wins); different SystemUsers side by side.
    // A store failure ends the call (503); the lines done by then stay done and a re-run finds them unchanged.
    await inGroups(groupBy(valid, ({ p }) => p.systemUser), HASH_CONCURRENCY, async ({ i, p }) => {
      results.set(i, { line: p.line, outcome: await upsertProvider(p) });
    });
    return summarize('providers', lines.length, results, req.audit);
  };

  const importTrips: Handler = async (req) => {
    req.audit.target = auditTarget('import', 'trips');
    const lines = linesOf(await req.body(), 'trips');
    req.audit.changes = fieldsOf(lines);
    const results = new Map<number, LineResult>();
    const providers = new Map<string, boolean>();
    // Vehicles this call has written (a later line of the same Dominio compares with it); the rest
    // are read one by one, so a call costs its own lines, not the size of the trip.
    const written = new Map<string, TripVehicle>();
    for (const [i, { line, entry }] of lines.entries()) {
      let parsed: { systemUser: string; dominio: string; nroSerie: string };
      try {
        onlyFields(entry, ['line', 'systemUser', 'dominio', 'nroSerie']);
        parsed = {
          systemUser: systemUserOf(requiredText(entry, 'systemUser', MAX_LENGTH.systemUser)),
          dominio: dominioOf(requiredText(entry, 'dominio', MAX_LENGTH.dominio)),
          nroSerie: requiredText(entry, 'nroSerie', MAX_LENGTH.nroSerie),
        };
      } catch (err) {
        results.set(i, { line, outcome: 'failed', reason: errorMessage(err) });
        continue;
      }
      const { systemUser, dominio, nroSerie } = parsed;
      let known = providers.get(systemUser);
      if (known === undefined) {
        known = (await backends.providers.get(systemUser)) !== null;
        providers.set(systemUser, known);
      }
      if (!known) {
        results.set(i, { line, outcome: 'failed', reason: `Provider "${systemUser}" does not exist; import providers first.` });
        continue;
      }
      const key = `${systemUser.length}:${systemUser}${dominio}`;
      const current = written.get(key) ?? (await backends.trips.getVehicle(systemUser, dominio));
      if (current?.nroSerie === nroSerie) {
        results.set(i, { line, outcome: 'unchanged' });
        continue;
      }
      const now = clock();
      await backends.trips.addVehicle(systemUser, dominio, nroSerie, now);
      written.set(key, { dominio, nroSerie, registeredAt: now, lastReport: current?.lastReport ?? null });
      results.set(i, { line, outcome: current === null ? 'created' : 'updated' });
    }
    return summarize('trips', lines.length, results, req.audit);
  };

  function summarize(what: string, count: number, results: Map<number, LineResult>, audit: { detail: AuditDetail | null }) {
    const ordered: JsonValue[] = [];
    const totals: Record<Outcome, number> = { created: 0, updated: 0, unchanged: 0, failed: 0 };
    for (let i = 0; i < count; i++) {
      const r = results.get(i);
      if (r === undefined) throw new Error(`Import of ${what}: line ${i} has no result.`);
      totals[r.outcome]++;
      ordered.push({ line: r.line, outcome: r.outcome, ...(r.reason === undefined ? {} : { reason: r.reason }) });
    }
    audit.detail = { lines: count, ...totals };
    log.info({ what, ...totals }, 'admin: import');
    return { status: 200, json: { results: ordered } };
  }

  return [
    { pattern: ['admin', 'import', 'providers'], bodyLimit: IMPORT_BODY_LIMIT_BYTES, handlers: { POST: { role: 'admin', run: importProviders } } },
    { pattern: ['admin', 'import', 'trips'], bodyLimit: IMPORT_BODY_LIMIT_BYTES, handlers: { POST: { role: 'admin', run: importTrips } } },
  ];
}
