/**
 * Schema of the operators' tokens and the audit trail (shared/backends/operators.ts), appended to
 * MIGRATIONS in database.ts as one migration. Never edit it once shipped: append another.
 */
export const OPERATOR_TABLES_MIGRATION = `
  -- Named tokens of the admin API. token_hash is the SHA-256 of the token; the token is never stored.
  CREATE TABLE operator_tokens (
    name         TEXT PRIMARY KEY,
    role         TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    created_by   TEXT NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER
  ) STRICT;

  -- Append-only: the admin API inserts, and retention deletes the oldest; nothing updates a row.
  -- AUTOINCREMENT so an id is never reused after the newest rows were expired.
  CREATE TABLE admin_audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    identity   TEXT,
    role       TEXT,
    address    TEXT NOT NULL,
    method     TEXT NOT NULL,
    route      TEXT NOT NULL,
    target     TEXT,
    scope      TEXT,
    status     INTEGER NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'refused')),
    changes    TEXT NOT NULL,
    detail     TEXT,
    request_id TEXT NOT NULL
  ) STRICT;
  -- Retention deletes by time; the filters read newest first by identity or by scope (provider/acme).
  CREATE INDEX admin_audit_by_at ON admin_audit (at);
  CREATE INDEX admin_audit_by_identity ON admin_audit (identity, id);
  CREATE INDEX admin_audit_by_scope ON admin_audit (scope, id);
`;
