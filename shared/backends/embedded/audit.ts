import {
  AUDIT_MAX_ENTRIES,
  auditScope,
  isRole,
  scanAuditPage,
  type AuditDetail,
  type AuditEntry,
  type AuditIndex,
  type AuditOutcome,
  type AuditStore,
} from '../operators.js';
import type { SqliteDatabase } from './database.js';
import type { StoreAccess } from './store-access.js';

interface AuditRow {
  id: number;
  at: number;
  identity: string | null;
  role: string | null;
  address: string;
  method: string;
  route: string;
  target: string | null;
  scope: string | null;
  status: number;
  outcome: string;
  changes: string;
  detail: string | null;
  request_id: string;
}

const OUTCOMES: readonly string[] = ['ok', 'failed', 'refused'];

function fromRow(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    identity: row.identity,
    role: isRole(row.role) ? row.role : null,
    address: row.address,
    method: row.method,
    route: row.route,
    target: row.target,
    status: row.status,
    outcome: (OUTCOMES.includes(row.outcome) ? row.outcome : 'failed') as AuditOutcome,
    changes: JSON.parse(row.changes) as string[],
    detail: row.detail === null ? null : (JSON.parse(row.detail) as AuditDetail),
    requestId: row.request_id,
  };
}

const NO_UPPER_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * The audit trail in the embedded database (table admin_audit). Appends wait, like every state
 * write, for the event commit in flight (store-access.ts); reads walk an index newest first a
 * chunk at a time (scanAuditPage), so a page costs at most AUDIT_SCAN_MAX rows of main-thread work.
 */
export function createAuditStore(db: SqliteDatabase, access: StoreAccess, maxEntries = AUDIT_MAX_ENTRIES): AuditStore {
  const insert = db.prepare<Omit<AuditRow, 'id'>>(
    `INSERT INTO admin_audit (at, identity, role, address, method, route, target, scope, status, outcome, changes, detail, request_id)
     VALUES (@at, @identity, @role, @address, @method, @route, @target, @scope, @status, @outcome, @changes, @detail, @request_id)`,
  );
  const all = db.prepare<[number, number], AuditRow>('SELECT * FROM admin_audit WHERE id < ? ORDER BY id DESC LIMIT ?');
  const byIdentity = db.prepare<[string, number, number], AuditRow>(
    'SELECT * FROM admin_audit WHERE identity = ? AND id < ? ORDER BY id DESC LIMIT ?',
  );
  const byScope = db.prepare<[string, number, number], AuditRow>('SELECT * FROM admin_audit WHERE scope = ? AND id < ? ORDER BY id DESC LIMIT ?');
  const expireOld = db.prepare<[number, number]>(
    'DELETE FROM admin_audit WHERE id IN (SELECT id FROM admin_audit WHERE at < ? ORDER BY at LIMIT ?)',
  );
  const expireOverCap = db.prepare<[number, number]>(
    `DELETE FROM admin_audit WHERE id IN (SELECT id FROM admin_audit
       WHERE id <= (SELECT id FROM admin_audit ORDER BY id DESC LIMIT 1 OFFSET ?) ORDER BY id LIMIT ?)`,
  );

  const read = async (index: AuditIndex, before: number | null, chunk: number): Promise<AuditEntry[]> => {
    const below = before ?? NO_UPPER_BOUND;
    const rows = access.read(() =>
      index.kind === 'identity'
        ? byIdentity.all(index.identity, below, chunk)
        : index.kind === 'scope'
          ? byScope.all(index.scope, below, chunk)
          : all.all(below, chunk),
    );
    return rows.map(fromRow);
  };

  return {
    async append(record) {
      const row: Omit<AuditRow, 'id'> = {
        at: record.at,
        identity: record.identity,
        role: record.role,
        address: record.address,
        method: record.method,
        route: record.route,
        target: record.target,
        scope: record.target === null ? null : auditScope(record.target),
        status: record.status,
        outcome: record.outcome,
        changes: JSON.stringify(record.changes),
        detail: record.detail === null ? null : JSON.stringify(record.detail),
        request_id: record.requestId,
      };
      const { lastInsertRowid } = await access.write(() => insert.run(row));
      return { ...record, changes: [...record.changes], id: Number(lastInsertRowid) };
    },
    page(query) {
      return scanAuditPage(query, read);
    },
    async expire(olderThan, max) {
      return access.write(() => {
        const old = expireOld.run(olderThan, max).changes;
        // Past the cap the oldest go too: the row at offset maxEntries is the newest one beyond it.
        return old + (old < max ? expireOverCap.run(maxEntries, max - old).changes : 0);
      });
    },
  };
}
