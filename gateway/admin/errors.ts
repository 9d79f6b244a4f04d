import type { JsonValue } from '../../shared/runtime/http-reply.js';

/**
 * Every error the admin API answers, in one table, as gateway/errors/registry.ts is for the
 * providers' side: the key the code answers by, the HTTP status, the message (`{name}` marks what
 * is filled in), and what else the answer carries: the request `field` at fault, headers, more
 * members of the JSON body. An answer is `{...body, "error": message, "field"?, "requestId"}`
 * (http.ts). docs/admin-api.md §Errors lists exactly these entries
 * (test/unit/gateway/admin/errors.unit.test.ts), and no other file builds an error of its own.
 *
 * A field's own check (validate.ts and the routes' parsers) words its message itself, as the one
 * place that knows the rule: `invalidField` carries it.
 */
interface AdminErrorDef {
  readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 429 | 500 | 503;
  readonly text: string;
  /** The request field at fault (`field` of the body). */
  readonly field?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** More members of the JSON body, before `error`. */
  readonly body?: Readonly<Record<string, string>>;
}

export const ADMIN_ERRORS = {
  // ---- who is calling (server.ts, access.ts) ---------------------------------------------------
  unauthorized: { status: 401, text: 'Missing or invalid bearer token.', headers: { 'WWW-Authenticate': 'Bearer' } },
  lockedOut: {
    status: 429,
    text: 'Too many invalid tokens from this address; it is locked out of the admin API for now.',
    headers: { 'Retry-After': '{retryAfter}' },
  },
  forbidden: { status: 403, text: '{route} needs the {role} role; {who}.', body: { requiredRole: '{role}' } },

  // ---- routing (server.ts) ---------------------------------------------------------------------
  badPathEncoding: { status: 400, text: 'Malformed percent-encoding in the URL path.' },
  noSuchRoute: { status: 404, text: 'No such route: {path}' },
  methodNotAllowed: { status: 405, text: 'Method {method} not allowed here; use {allowed}.', headers: { Allow: '{allowed}' } },

  // ---- the request (http.ts, validate.ts) ------------------------------------------------------
  bodyTooLarge: { status: 413, text: 'Request body exceeds the limit of {limit} bytes.', headers: { Connection: 'close' } },
  bodyNotUtf8: { status: 400, text: 'Request body is not valid UTF-8: byte 0x{byte} at line {line}, column {column}; send UTF-8.' },
  bodyEmpty: { status: 400, text: 'Request body is empty; a JSON object is required.' },
  bodyNotJson: { status: 400, text: 'Request body is not valid JSON: {detail}' },
  bodyNotObject: { status: 400, text: 'Request body must be a JSON object.' },
  unknownField: { status: 400, text: 'Unknown field "{name}"; expected {expected}.', field: '{name}' },
  unknownQueryParameter: { status: 400, text: 'Unknown query parameter "{name}"; expected {expected}.', field: '{name}' },
  invalidField: { status: 400, text: '{message}', field: '{field}' },
  nothingToUpdate: { status: 400, text: 'Nothing to update: give at least one of {fields}.' },

  // ---- what the path names -------------------------------------------------------------------------
  providerNotFound: { status: 404, text: 'Provider "{systemUser}" not found.' },
  commandNotFound: { status: 404, text: 'Provider "{systemUser}" has no command {numero}.' },
  vehicleNotOnTrip: { status: 404, text: 'Vehicle "{dominio}" is not on a trip of provider "{systemUser}".' },
  poisonNotFound: { status: 404, text: 'No poison message "{id}".' },
  noPoisonEmbedded: { status: 404, text: 'The embedded mode sets no messages aside: there are none.' },
  tokenNotFound: { status: 404, text: 'No token named "{name}".' },
  bootstrapNotRevocable: { status: 404, text: '"{identity}" is the ADMIN_TOKEN: change it in the gateway\'s configuration.' },
  metricsOff: { status: 404, text: 'Metrics are not enabled.' },

  // ---- what the store holds --------------------------------------------------------------------
  providerExists: { status: 409, text: 'Provider "{systemUser}" already exists.', field: 'systemUser' },
  commandNotOpen: { status: 409, text: 'Command {numero} is {state}; only a pending or in-process command can be cancelled.' },
  poisonTruncated: { status: 409, text: 'Poison message "{id}" was too large to keep whole; discard it instead.' },
  tokenExists: { status: 409, text: 'A token named "{name}" exists; revoke it first to issue a new one.', field: 'name' },
  tokensFull: { status: 409, text: 'The gateway holds as many tokens as it keeps ({max}); revoke unused ones first.' },

  // ---- the server ------------------------------------------------------------------------------
  tooManyStreams: {
    status: 503,
    text: 'Too many live streams open ({max}, ADMIN_STREAMS_MAX); close one or retry later.',
    headers: { 'Retry-After': '30' },
  },
  storeUnavailable: { status: 503, text: 'The store is temporarily unavailable; retry later (request {requestId}).', headers: { 'Retry-After': '5' } },
  internalError: { status: 500, text: 'Internal error (request {requestId}); the gateway log has the details under this id.' },
} as const satisfies Record<string, AdminErrorDef>;

export type AdminErrorKey = keyof typeof ADMIN_ERRORS;
type Def<K extends AdminErrorKey> = (typeof ADMIN_ERRORS)[K];

/** The `{name}`s of a template, as a union of names. */
type Placeholders<T> = T extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never;
type ValuesOf<T> = T extends Readonly<Record<string, string>> ? T[keyof T] : never;
/** Every template of an entry: its text, field, header values and body values. */
type Templates<D> = D extends { readonly text: infer T } ? T | (D extends { readonly field: infer F } ? F : never) | ValuesOf<D extends { readonly headers: infer H } ? H : never> | ValuesOf<D extends { readonly body: infer B } ? B : never> : never;

/** What `AdminError.of` needs for `key`: nothing, or a value for each of its placeholders. */
export type AdminErrorParams<K extends AdminErrorKey> = [Placeholders<Templates<Def<K>>>] extends [never]
  ? []
  : [Readonly<Record<Placeholders<Templates<Def<K>>>, string | number>>];

const PLACEHOLDER = /\{(\w+)\}/g;

function fill(template: string, values: Readonly<Record<string, string | number>> | undefined): string {
  return values === undefined ? template : template.replace(PLACEHOLDER, (whole, name: string) => String(values[name] ?? whole));
}

function filled(templates: Readonly<Record<string, string>> | undefined, values: Readonly<Record<string, string | number>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(templates ?? {})) out[name] = fill(template, values);
  return out;
}

/** An answer of the admin API other than success: its registry entry, filled in. */
export class AdminError extends Error {
  readonly status: AdminErrorDef['status'];
  readonly field: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  /** More members of the JSON body (a refusal's `requiredRole`). */
  readonly extra: { readonly [key: string]: JsonValue };

  private constructor(
    readonly key: AdminErrorKey,
    values: Readonly<Record<string, string | number>> | undefined,
  ) {
    const def: AdminErrorDef = ADMIN_ERRORS[key];
    super(fill(def.text, values));
    this.name = 'AdminError';
    this.status = def.status;
    this.field = def.field === undefined ? undefined : fill(def.field, values);
    this.headers = filled(def.headers, values);
    this.extra = filled(def.body, values);
  }

  static of<K extends AdminErrorKey>(key: K, ...params: AdminErrorParams<K>): AdminError {
    return new AdminError(key, params[0]);
  }
}

/** A 400 naming the request field at fault, in the words of the check that refused it. */
export function invalid(field: string, message: string): AdminError {
  return AdminError.of('invalidField', { field, message });
}

/** `"a", "b", "c"`: the names a request may use, as the messages list them. */
export function quotedList(names: readonly string[]): string {
  return names.map((name) => `"${name}"`).join(', ');
}
