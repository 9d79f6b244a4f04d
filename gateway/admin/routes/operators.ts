import { auditTarget, isRole, MAX_OPERATOR_TOKENS, ROLES, type AuditEntry, type AuditQuery, type OperatorToken } from '../../../shared/backends/operators.js';
import { BOOTSTRAP_IDENTITY, newOperatorToken, operatorTokenHash } from '../access.js';
import { AdminError, invalid } from '../errors.js';
import type { JsonValue } from '../http.js';
import { param, type AdminDeps, type Handler, type Route, type RouteRequest } from '../route.js';
import { limitOf, onlyFields, onlyQueryParams, positiveIntegerOf, requiredString } from '../validate.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** Token names: what a person or script is called in the audit trail; safe in a URL segment and a log line. */
const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const QUERY_TEXT_MAX = 300;

/** What the API shows of a token: never the token, never its hash. */
function tokenView(t: OperatorToken, now: number): { [key: string]: JsonValue } {
  return {
    name: t.name,
    role: t.role,
    createdAt: iso(t.createdAt),
    createdBy: t.createdBy,
    expiresAt: isoOrNull(t.expiresAt),
    expired: t.expiresAt !== null && t.expiresAt <= now,
    lastUsedAt: isoOrNull(t.lastUsedAt),
  };
}

function auditEntryView(e: AuditEntry): { [key: string]: JsonValue } {
  return {
    id: e.id,
    at: iso(e.at),
    identity: e.identity,
    role: e.role,
    address: e.address,
    method: e.method,
    route: e.route,
    target: e.target,
    status: e.status,
    outcome: e.outcome,
    changes: e.changes,
    detail: e.detail,
    requestId: e.requestId,
  };
}

/** ISO-8601 with an explicit zone: a local time would mean something else on every server. */
function instantOf(raw: string, field: string): number {
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?(Z|[+-]\d\d:\d\d)$/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw invalid(field, `${field} must be an ISO-8601 time with a zone (e.g. 2026-01-31T12:00:00Z), got "${raw}".`);
  return ms;
}

function queryText(query: URLSearchParams, field: string): string | undefined {
  const value = query.get(field);
  if (value === null || value === '') return undefined;
  if (value.length > QUERY_TEXT_MAX) throw invalid(field, `${field} must be at most ${QUERY_TEXT_MAX} characters.`);
  return value;
}

/** The audit query of `?since=&identity=&target=&limit=&before=` (a provider's page fixes the target). */
function auditQueryOf(req: RouteRequest, target?: string): AuditQuery {
  onlyQueryParams(req.query, target === undefined ? ['since', 'identity', 'target', 'limit', 'before'] : ['since', 'identity', 'limit', 'before']);
  const since = queryText(req.query, 'since');
  const before = queryText(req.query, 'before');
  const identity = queryText(req.query, 'identity');
  const chosenTarget = target ?? queryText(req.query, 'target');
  return {
    limit: limitOf(req.query.get('limit')),
    ...(since === undefined ? {} : { since: instantOf(since, 'since') }),
    ...(before === undefined ? {} : { before: positiveIntegerOf(before, 'before') }),
    ...(identity === undefined ? {} : { identity }),
    ...(chosenTarget === undefined ? {} : { target: chosenTarget }),
  };
}

/** Who am I, named tokens, and the audit trail (docs/admin-api.md §Identities and roles). */
export function operatorRoutes(deps: AdminDeps): Route[] {
  const { backends, clock, logger: log } = deps;
  const tokens = backends.operators.tokens;

  const whoami: Handler = async (req) => {
    onlyQueryParams(req.query, []);
    const p = req.principal;
    if (p === null) throw AdminError.of('unauthorized');
    return { status: 200, json: { identity: p.identity, role: p.role, kind: p.kind, expiresAt: isoOrNull(p.expiresAt), routes: deps.allowedFor(p.role) } };
  };

  const listTokens: Handler = async (req) => {
    onlyQueryParams(req.query, []);
    const now = clock();
    return { status: 200, json: { tokens: (await tokens.list()).map((t) => tokenView(t, now)) } };
  };

  /** The token is in this answer and nowhere else: only its hash is stored, and no log line has it. */
  const createToken: Handler = async (req) => {
    const body = await req.body();
    onlyFields(body, ['name', 'role', 'expiresAt']);
    const name = requiredString(body, 'name');
    req.audit.target = TOKEN_NAME.test(name) ? auditTarget('token', name) : null;
    if (!TOKEN_NAME.test(name)) throw invalid('name', 'name must be 1 to 64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit.');
    if (name.toLowerCase() === BOOTSTRAP_IDENTITY) throw invalid('name', `"${BOOTSTRAP_IDENTITY}" is the ADMIN_TOKEN's identity; choose another name.`);
    const role = body.role;
    if (!isRole(role)) throw invalid('role', `role must be one of ${ROLES.join(', ')}.`);
    const now = clock();
    let expiresAt: number | null = null;
    if (body.expiresAt !== undefined && body.expiresAt !== null) {
      if (typeof body.expiresAt !== 'string') throw invalid('expiresAt', 'expiresAt must be an ISO-8601 time with a zone, or null.');
      expiresAt = instantOf(body.expiresAt, 'expiresAt');
      if (expiresAt <= now) throw invalid('expiresAt', 'expiresAt must be in the future.');
    }
    const token = newOperatorToken();
    const record: OperatorToken = {
      name,
      role,
      tokenHash: operatorTokenHash(token),
      createdAt: now,
      createdBy: req.principal?.identity ?? '?',
      expiresAt,
      lastUsedAt: null,
    };
    const outcome = await tokens.create(record);
    if (outcome === 'exists') throw AdminError.of('tokenExists', { name });
    if (outcome === 'full') throw AdminError.of('tokensFull', { max: MAX_OPERATOR_TOKENS });
    req.audit.detail = { role, expiresAt: isoOrNull(expiresAt) };
    log.info({ name, role, expiresAt: isoOrNull(expiresAt), by: record.createdBy }, 'admin: operator token created');
    return { status: 201, json: { ...tokenView(record, now), token } };
  };

  const revokeToken: Handler = async (req) => {
    const name = param(req, 'name');
    if (name === BOOTSTRAP_IDENTITY) throw AdminError.of('bootstrapNotRevocable', { identity: BOOTSTRAP_IDENTITY });
    if (!(await tokens.revoke(name))) throw AdminError.of('tokenNotFound', { name });
    log.info({ name, by: req.principal?.identity }, 'admin: operator token revoked');
    return { status: 204 };
  };

  const page = async (query: AuditQuery) => {
    const result = await backends.operators.audit.page(query);
    return { status: 200 as const, json: { entries: result.entries.map(auditEntryView), nextBefore: result.nextBefore } };
  };

  return [
    { pattern: ['admin', 'whoami'], handlers: { GET: { role: 'viewer', run: whoami } } },
    { pattern: ['admin', 'tokens'], handlers: { GET: { role: 'admin', run: listTokens }, POST: { role: 'admin', run: createToken } } },
    { pattern: ['admin', 'tokens', ':name'], handlers: { DELETE: { role: 'admin', run: revokeToken } } },
    { pattern: ['admin', 'audit'], handlers: { GET: { role: 'admin', run: (req) => page(auditQueryOf(req)) } } },
    {
      pattern: ['admin', 'providers', ':systemUser', 'audit'],
      handlers: { GET: { role: 'operator', run: (req) => page(auditQueryOf(req, auditTarget('provider', param(req, 'systemUser')))) } },
    },
  ];
}
