import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { BackendUnavailableError } from '../../shared/backends/types.js';
import type { GuessPolicy, OperatorStores, Role } from '../../shared/backends/operators.js';
import type { Logger } from '../../shared/runtime/logger.js';

/** Who is calling: the bootstrap administrator (ADMIN_TOKEN) or a named operator token. */
export interface Principal {
  identity: string;
  role: Role;
  kind: 'bootstrap' | 'token';
  expiresAt: number | null;
  /** A named token's hash (to check it again while a live stream lasts); never shown. */
  tokenHash: string | null;
}

/** The identity ADMIN_TOKEN / ADMIN_TOKEN_FILE signs in as; no named token may take it. */
export const BOOTSTRAP_IDENTITY = 'bootstrap';
/** Operators' tokens start with this, so a leaked one is recognisable (secret scanners, logs). */
const OPERATOR_TOKEN_PREFIX = 'gwo_';

/** A new operator token: the prefix and 32 random bytes, base64url. */
export function newOperatorToken(): string {
  return `${OPERATOR_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * What the stores keep of a token: its SHA-256 in hex. A fast hash is enough for 256 random bits
 * (nobody can search that space), unlike a password, which needs scrypt.
 */
export function operatorTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

type Authentication =
  | { kind: 'ok'; principal: Principal }
  /** No bearer token at all: 401, neither counted as a guess nor audited (nothing was guessed). */
  | { kind: 'missing' }
  /** The address is locked out after wrong tokens: 429 until `until`, not audited again. */
  | { kind: 'locked'; until: number }
  /** A wrong, revoked or expired token: 401 (429 when this one set the lock), audited. */
  | { kind: 'refused'; reason: 'unknown' | 'expired'; identity: string | null; lockedUntil: number | null };

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

function bearerOf(headers: IncomingHttpHeaders): string | null {
  const header = headers.authorization;
  if (typeof header !== 'string') return null;
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1] ?? null;
}

interface AdminAccessOptions {
  /** ADMIN_TOKEN (or ADMIN_TOKEN_FILE, or the generated one): the bootstrap administrator. */
  bootstrapToken: string;
  stores: OperatorStores;
  /** Wrong tokens per address before it is locked out (the providers' LOCKOUT_* settings). */
  policy: GuessPolicy;
  logger: Logger;
}

/**
 * Tells who presented a bearer token. The bootstrap token is compared in constant time (both sides
 * hashed first); any other token is looked up by its hash in the store on every request, so a
 * revocation is in force for the next request on every gateway. Wrong tokens count against the
 * client's address like providers' failed logins; a locked address is refused before its token is
 * looked at, so guessing on cannot tell a right token from a wrong one.
 */
export class AdminAccess {
  private readonly bootstrap: Buffer;

  constructor(private readonly options: AdminAccessOptions) {
    if (options.bootstrapToken === '') throw new Error('The admin token must not be empty.');
    this.bootstrap = digest(options.bootstrapToken);
  }

  async authenticate(headers: IncomingHttpHeaders, address: string, now: number): Promise<Authentication> {
    const token = bearerOf(headers);
    if (token === null) return { kind: 'missing' };
    const { stores, policy } = this.options;
    const lockedUntil = await this.lockedUntil(address, now);
    if (lockedUntil !== null) return { kind: 'locked', until: lockedUntil };

    if (timingSafeEqual(digest(token), this.bootstrap)) {
      return { kind: 'ok', principal: { identity: BOOTSTRAP_IDENTITY, role: 'admin', kind: 'bootstrap', expiresAt: null, tokenHash: null } };
    }
    const found = token.startsWith(OPERATOR_TOKEN_PREFIX) ? await stores.tokens.use(operatorTokenHash(token), now) : null;
    if (found !== null && (found.expiresAt === null || found.expiresAt > now)) {
      return { kind: 'ok', principal: { identity: found.name, role: found.role, kind: 'token', expiresAt: found.expiresAt, tokenHash: found.tokenHash } };
    }
    return {
      kind: 'refused',
      reason: found === null ? 'unknown' : 'expired',
      identity: found?.name ?? null,
      lockedUntil: await stores.lockouts.recordFailure(address, now, policy),
    };
  }

  /**
   * The lock on the address. When its store cannot answer (Redis down) the request goes on to the
   * token check rather than failing: the bootstrap administrator must reach the overview during
   * an outage, which is when it is looked at.
   */
  private async lockedUntil(address: string, now: number): Promise<number | null> {
    try {
      return await this.options.stores.lockouts.lockedUntil(address, now);
    } catch (err) {
      if (!(err instanceof BackendUnavailableError)) throw err;
      this.options.logger.warn({ err: err.message }, 'admin: the token lockout store is unavailable; tokens are checked without it');
      return null;
    }
  }
}
