import type { HttpRequest } from './uws.js';

/**
 * The request's headers as the gateway reads them: one walk over the header lines that keeps the
 * few any route reads and finds a Content-Length in doubt, and the cookie header's values.
 */

/** The only request headers any route reads (`Exchange.header`). */
export type HeaderName = 'content-type' | 'content-length' | 'soapaction' | 'cookie' | 'host' | 'x-forwarded-for';

/** State of one header walk (`readHeaders`): module-level so the walk allocates no closure. */
let walkFirstLength: string | null = null;
let walkAmbiguous = false;
let walkInto: Record<HeaderName, string> | null = null;
/** Bit per kept header the walk has met: the first line of each wins, as uWS's getHeader answers. */
let walkSeen = 0;

/** The bit of a header `Exchange` keeps, or 0 (uWS hands names lower-cased). */
function keptBit(name: string): number {
  switch (name) {
    case 'content-type':
      return 1;
    case 'content-length':
      return 2;
    case 'soapaction':
      return 4;
    case 'cookie':
      return 8;
    case 'host':
      return 16;
    case 'x-forwarded-for':
      return 32;
    default:
      return 0;
  }
}

function visitHeader(name: string, value: string): void {
  if (walkInto !== null) {
    const bit = keptBit(name);
    if (bit !== 0 && (walkSeen & bit) === 0) {
      walkSeen |= bit;
      walkInto[name as HeaderName] = value;
    }
  }
  if (name !== 'content-length') return;
  if (walkFirstLength === null) {
    walkFirstLength = value;
    if (!isDigits(value)) walkAmbiguous = true;
  } else if (value !== walkFirstLength) {
    walkAmbiguous = true;
  }
}

function isDigits(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * True when the body's length is in doubt: two Content-Length lines that differ, or one that is
 * not a number (empty included). uWS frames the body by the first line, a proxy in front may use
 * another, and what one reads as body the other reads as the next request. uWS itself closes the
 * connection, unanswered, on a lone non-numeric value and on Content-Length with
 * Transfer-Encoding; the rest only a walk over every header line finds (bench/header-scan.ts).
 */
export function lengthIsAmbiguous(req: HttpRequest): boolean {
  return readHeaders(req, null);
}

/**
 * One walk over the request's header lines: fills `into` with the first value of each header it
 * names (what getHeader would answer, without a native call per header: the walk meets every line
 * anyway) and answers `lengthIsAmbiguous`.
 */
export function readHeaders(req: HttpRequest, into: Record<HeaderName, string> | null): boolean {
  walkFirstLength = null;
  walkAmbiguous = false;
  walkInto = into;
  walkSeen = 0;
  req.forEach(visitHeader);
  walkInto = null;
  return walkAmbiguous;
}

export function readCookie(header: string, name: string): string | null {
  if (header === '') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
