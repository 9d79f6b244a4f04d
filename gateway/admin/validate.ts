import { MAX_LENGTH } from '../../shared/catalogue/index.js';
import { isValidTimeZone } from '../../shared/config/index.js';
import { AdminError, invalid, quotedList } from './errors.js';

/** Field checks of the admin API; each failure is a 400 naming the field. */

const SYSTEM_USER_MAX_LENGTH = MAX_LENGTH.systemUser;

/** Refuses fields the route does not know, so a misspelt field is not silently ignored. */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw AdminError.of('unknownField', { name: key, expected: quotedList(allowed) });
  }
}

// C0/C1 controls, the line/paragraph separators, and what XML 1.0 cannot carry at all (lone
// surrogates, U+FFFE/U+FFFF): these values end up in SOAP answers, which must stay well-formed.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;

/** A 400 naming the field when the value holds a character no client could read back. */
export function plainText(value: string, field: string): string {
  if (CONTROL.test(value)) throw invalid(field, `${field} must not contain control characters.`);
  return value;
}

/** A required, non-empty string of at most `maxLength` characters without control characters. */
export function requiredText(body: Record<string, unknown>, field: string, maxLength: number): string {
  const value = plainText(requiredString(body, field), field);
  if (value.length > maxLength) throw invalid(field, `${field} must be at most ${maxLength} characters.`);
  return value;
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw invalid(field, `${field} is required.`);
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string.`);
  if (value.trim() === '') throw invalid(field, `${field} must not be empty.`);
  return value;
}

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalid(field, `${field} must be true or false.`);
  return value;
}

export function systemUserOf(value: string, field = 'systemUser'): string {
  if (value.trim() === '') throw invalid(field, `${field} must not be empty.`);
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- the limit counts code points, as the spread does
  if ([...value].length > SYSTEM_USER_MAX_LENGTH) {
    throw invalid(field, `${field} must be at most ${SYSTEM_USER_MAX_LENGTH} characters.`);
  }
  if (value !== value.trim()) throw invalid(field, `${field} must not start or end with whitespace.`);
  // A path segment of "." or ".." is resolved away by browsers and HTTP clients before it is sent, so
  // such a provider could be created but never shown, changed or deleted through its URL.
  if (value === '.' || value === '..') throw invalid(field, `${field} cannot be "." or ".." (no URL can name it).`);
  return plainText(value, field);
}

/** Same rule as CambiarClave (docs/protocol.md §Authentication and passwords): at least passwordMinLength characters. */
export function passwordOf(body: Record<string, unknown>, minLength: number, field = 'password'): string {
  const value = body[field];
  if (value === undefined || value === null) throw invalid(field, `${field} is required.`);
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string.`);
  if (value.length < minLength) throw invalid(field, `${field} must be at least ${minLength} characters.`);
  if (value.length > MAX_LENGTH.password) throw invalid(field, `${field} must be at most ${MAX_LENGTH.password} characters.`);
  return plainText(value, field);
}

let zoneSpellings: Map<string, string> | null = null;

/** The usual spelling of a zone name typed in another case ("utc" → "UTC"), else the name as given. */
function zoneSpelling(value: string): string {
  if (zoneSpellings === null) {
    zoneSpellings = new Map();
    for (const zone of [...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']) zoneSpellings.set(zone.toLowerCase(), zone);
  }
  return zoneSpellings.get(value.toLowerCase()) ?? value;
}

/**
 * A valid IANA zone. Kept as the operator spelt it (ICU's resolvedOptions would rewrite e.g.
 * America/Argentina/Buenos_Aires to the legacy America/Buenos_Aires), but with the usual case when
 * a known zone was typed in another one: "utc" must become "UTC", which formatInstant writes as Z.
 * null = the service's TIME_ZONE.
 */
export function timeZoneOf(value: unknown, field = 'timeZone'): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalid(field, `${field} must be an IANA time zone name (e.g. "America/Argentina/Buenos_Aires") or null.`);
  }
  if (!isValidTimeZone(value)) throw invalid(field, `${field} "${value}" is not a valid IANA time zone.`);
  return zoneSpelling(value);
}

const EVENTS_DEFAULT_LIMIT = 100;
const EVENTS_MAX_LIMIT = 1000;

export function limitOf(raw: string | null): number {
  if (raw === null || raw === '') return EVENTS_DEFAULT_LIMIT;
  if (!/^\d+$/.test(raw)) throw invalid('limit', `limit must be a whole number between 1 and ${EVENTS_MAX_LIMIT}.`);
  const n = Number(raw);
  if (n < 1 || n > EVENTS_MAX_LIMIT) {
    throw invalid('limit', `limit must be between 1 and ${EVENTS_MAX_LIMIT}, got ${raw}.`);
  }
  return n;
}

export function onlyQueryParams(query: URLSearchParams, allowed: readonly string[]): void {
  for (const key of query.keys()) {
    if (!allowed.includes(key)) throw AdminError.of('unknownQueryParameter', { name: key, expected: quotedList(allowed) });
  }
}

/** A Dominio as registered on a trip: non-empty, at most its limit, no control characters. */
export function dominioOf(value: string, field = 'dominio'): string {
  if (value.trim() === '') throw invalid(field, `${field} must not be empty.`);
  if (value.length > MAX_LENGTH.dominio) throw invalid(field, `${field} must be at most ${MAX_LENGTH.dominio} characters.`);
  // As for SystemUsers: a vehicle registered as "." or ".." could never be removed through its URL.
  if (value === '.' || value === '..') throw invalid(field, `${field} cannot be "." or ".." (no URL can name it).`);
  return plainText(value, field);
}

/** A whole number from 1 up to 2^53 - 1 (a NUMERO). */
export function positiveIntegerOf(raw: string, field: string): number {
  const n = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(field, `${field} must be a whole number of at least 1, got "${raw}".`);
  return n;
}

const MAX_EVENT_ID = 2n ** 64n - 1n;

/** An event id: a decimal 64-bit whole number of at least 1. */
export function eventIdOf(raw: string, field: string): bigint {
  const id = /^\d{1,20}$/.test(raw) ? BigInt(raw) : -1n;
  if (id < 1n || id > MAX_EVENT_ID) throw invalid(field, `${field} must be an event id (a whole number from 1 to 2^64-1), got "${raw}".`);
  return id;
}
