import type { ArrivalCounter } from './live-feed.js';
import type { EventQuery, EventStore } from '../types.js';
import type { SqliteDatabase } from './database.js';
import { EVENT_ROWS } from './event-row.js';
import type { StoreAccess } from './store-access.js';

const SQLITE_MAX_INTEGER = 2n ** 63n - 1n;

export function createEventStore(db: SqliteDatabase, access: StoreAccess, arrivals: ArrivalCounter): EventStore {
  // One statement per filter combination, so each gets its own plan (events_by_provider when the
  // provider is given; the rowid, newest first, otherwise). Prepared on first use.
  type Statement = ReturnType<typeof prepare>;
  const prepare = (where: string[]) =>
    db
      .prepare<unknown[], Record<string, unknown>>(`SELECT * FROM events ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY id DESC LIMIT ?`)
      .safeIntegers();
  const statements = new Map<string, Statement>();
  function statementFor(provider: boolean, dominio: boolean, before: boolean): Statement {
    const key = `${Number(provider)}${Number(dominio)}${Number(before)}`;
    let statement = statements.get(key);
    if (statement === undefined) {
      const where = [provider ? 'system_user = ?' : '', dominio ? 'dominio = ?' : '', before ? 'id < ?' : ''].filter((c) => c !== '');
      statement = prepare(where);
      statements.set(key, statement);
    }
    return statement;
  }
  // The latest arrival of every provider: one step down events_by_provider each.
  const lastArrivals = db.prepare<[], { system_user: string; last: number | null }>(
    `SELECT p.system_user, (SELECT e.received_at FROM events e WHERE e.system_user = p.system_user ORDER BY e.id DESC LIMIT 1) AS last
     FROM providers p`,
  );

  return {
    async recent(query: EventQuery) {
      // LIMIT -1 is SQLite for "no limit".
      const limit = query.limit === Infinity ? -1 : Math.floor(query.limit);
      if (!(limit > 0 || limit === -1)) return [];
      const { provider, dominio } = query;
      // SQLite integers are signed 64-bit: every id stored is below 2^63, so a larger bound (an id of
      // the scale-out mode's unsigned range) filters nothing and must not reach the binding, which throws.
      const beforeId = query.beforeId !== undefined && query.beforeId > SQLITE_MAX_INTEGER ? undefined : query.beforeId;
      const params: unknown[] = [];
      if (provider !== undefined) params.push(provider);
      if (dominio !== undefined) params.push(dominio);
      if (beforeId !== undefined) params.push(beforeId);
      const statement = statementFor(provider !== undefined, dominio !== undefined, beforeId !== undefined);
      return access.read(() => statement.all(...params, limit)).map(EVENT_ROWS.fromRow);
    },
    async activity(since: number) {
      const counted = arrivals.activity(since);
      const last = new Map(access.read(() => lastArrivals.all()).map((r) => [r.system_user, r.last]));
      const providers = counted.providers.map((p) => ({ ...p, lastEventAt: last.get(p.systemUser) ?? null }));
      const active = new Set(providers.map((p) => p.systemUser));
      for (const [systemUser, lastEventAt] of last) {
        if (lastEventAt !== null && !active.has(systemUser)) providers.push({ systemUser, events: 0, lastEventAt });
      }
      return { buckets: counted.buckets, providers };
    },
  };
}
