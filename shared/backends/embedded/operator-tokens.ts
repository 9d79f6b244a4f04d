import {
  isRole,
  LAST_USED_RESOLUTION_MS,
  MAX_OPERATOR_TOKENS,
  type OperatorStores,
  type OperatorToken,
  type OperatorTokenStore,
  type TokenCreateOutcome,
} from '../operators.js';
import { MemoryAdminLockoutStore } from './admin-lockouts.js';
import { createAuditStore } from './audit.js';
import type { SqliteDatabase } from './database.js';
import type { StoreAccess } from './store-access.js';

interface TokenRow {
  name: string;
  role: string;
  token_hash: string;
  created_at: number;
  created_by: string;
  expires_at: number | null;
  last_used_at: number | null;
}

function fromRow(row: TokenRow): OperatorToken {
  if (!isRole(row.role)) throw new Error(`operator_tokens row ${row.name} has role ${row.role}.`);
  return {
    name: row.name,
    role: row.role,
    tokenHash: row.token_hash,
    createdAt: row.created_at,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Operators' tokens in the embedded database (table operator_tokens). */
function createOperatorTokenStore(db: SqliteDatabase, access: StoreAccess): OperatorTokenStore {
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM operator_tokens');
  const insert = db.prepare<TokenRow>(
    `INSERT INTO operator_tokens (name, role, token_hash, created_at, created_by, expires_at, last_used_at)
     VALUES (@name, @role, @token_hash, @created_at, @created_by, @expires_at, @last_used_at)
     ON CONFLICT DO NOTHING`,
  );
  const byHash = db.prepare<[string], TokenRow>('SELECT * FROM operator_tokens WHERE token_hash = ?');
  const touch = db.prepare<[number, string]>('UPDATE operator_tokens SET last_used_at = ? WHERE name = ?');
  const all = db.prepare<[], TokenRow>('SELECT * FROM operator_tokens ORDER BY name');
  const remove = db.prepare<[string]>('DELETE FROM operator_tokens WHERE name = ?');

  const create = db.transaction((t: OperatorToken): TokenCreateOutcome => {
    if ((count.get()?.n ?? 0) >= MAX_OPERATOR_TOKENS) return 'full';
    const row: TokenRow = {
      name: t.name,
      role: t.role,
      token_hash: t.tokenHash,
      created_at: t.createdAt,
      created_by: t.createdBy,
      expires_at: t.expiresAt,
      last_used_at: t.lastUsedAt,
    };
    return insert.run(row).changes === 0 ? 'exists' : 'created';
  });

  return {
    async create(token) {
      return access.write(() => create.immediate(token));
    },
    async use(tokenHash, now) {
      const row = access.read(() => byHash.get(tokenHash));
      if (row === undefined) return null;
      const token = fromRow(row);
      const live = token.expiresAt === null || token.expiresAt > now;
      if (live && (token.lastUsedAt === null || now - token.lastUsedAt >= LAST_USED_RESOLUTION_MS)) {
        await access.write(() => touch.run(now, token.name));
        token.lastUsedAt = now;
      }
      return token;
    },
    async list() {
      return access.read(() => all.all()).map(fromRow);
    },
    async revoke(name) {
      return (await access.write(() => remove.run(name))).changes > 0;
    },
  };
}

/** The embedded mode's operator stores: tokens and audit in SQLite, guess lockouts in memory (as providers' are). */
export function createEmbeddedOperatorStores(db: SqliteDatabase, access: StoreAccess, lockoutTrackedMax?: number): OperatorStores {
  return {
    tokens: createOperatorTokenStore(db, access),
    audit: createAuditStore(db, access),
    lockouts: new MemoryAdminLockoutStore(lockoutTrackedMax),
  };
}
