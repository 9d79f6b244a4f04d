import type { ArrivalCounter } from '../live/local-feed.js';
import type { EventInstant, EventQuery, EventStore, StoredEvent } from '../types.js';
import type { SqliteDatabase } from './database.js';
import type { StoreAccess } from './store-access.js';

/** As read with safeIntegers: every INTEGER column is a bigint, REAL columns stay numbers. */
interface StoredRow {
  id: bigint;
  system_user: string;
  dominio: string;
  nro_serie: string;
  codigo: string;
  latitud: number;
  longitud: number;
  altitud: number;
  velocidad: number;
  rumbo: number | null;
  valid_position: bigint;
  valido: bigint | null;
  event_time_text: string;
  event_time_ms: bigint;
  event_time_ticks: bigint;
  reception_time_text: string | null;
  reception_time_ms: bigint | null;
  reception_time_ticks: bigint | null;
  received_at: bigint;
  crudo: string | null;
  sensors: string;
  operation: string;
  dedupe_key: string;
  stored_at: bigint;
}

function parseSensors(text: string): { clave: string; valor: string }[] {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) return [];
  return parsed.map((item: unknown) => {
    const { clave, valor } = (item ?? {}) as { clave?: unknown; valor?: unknown };
    return { clave: String(clave ?? ''), valor: String(valor ?? '') };
  });
}

function instant(ms: bigint, ticks: bigint): EventInstant {
  return { epochMs: Number(ms), subMsTicks: Number(ticks) };
}

function fromRow(row: StoredRow): StoredEvent {
  return {
    id: row.id,
    systemUser: row.system_user,
    dominio: row.dominio,
    nroSerie: row.nro_serie,
    codigo: row.codigo,
    latitud: row.latitud,
    longitud: row.longitud,
    altitud: row.altitud,
    velocidad: row.velocidad,
    rumbo: row.rumbo,
    validPosition: row.valid_position !== 0n,
    valido: row.valido === null ? null : row.valido !== 0n,
    eventTimeText: row.event_time_text,
    eventTime: instant(row.event_time_ms, row.event_time_ticks),
    receptionTimeText: row.reception_time_text,
    receptionTime:
      row.reception_time_ms === null ? null : instant(row.reception_time_ms, row.reception_time_ticks ?? 0n),
    receivedAt: Number(row.received_at),
    crudo: row.crudo,
    sensors: parseSensors(row.sensors),
    operation: row.operation,
    dedupeKey: row.dedupe_key,
    storedAt: Number(row.stored_at),
  };
}

export function createEventStore(db: SqliteDatabase, access: StoreAccess, arrivals: ArrivalCounter): EventStore {
  // One statement per filter combination, so each gets its own plan (events_by_provider when the
  // provider is given; the rowid, newest first, otherwise). Prepared on first use.
  type Statement = ReturnType<typeof prepare>;
  const prepare = (where: string[]) =>
    db
      .prepare<unknown[], StoredRow>(`SELECT * FROM events ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY id DESC LIMIT ?`)
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
      const { provider, dominio, beforeId } = query;
      const params: unknown[] = [];
      if (provider !== undefined) params.push(provider);
      if (dominio !== undefined) params.push(dominio);
      if (beforeId !== undefined) params.push(beforeId);
      const statement = statementFor(provider !== undefined, dominio !== undefined, beforeId !== undefined);
      return access.read(() => statement.all(...params, limit)).map(fromRow);
    },
    async activity(since: number) {
      const counted = arrivals.activity(since);
      const last = new Map(access.read(() => lastArrivals.all()).map((r) => [r.system_user, r.last === null ? null : Number(r.last)]));
      const providers = counted.providers.map((p) => ({ ...p, lastEventAt: last.get(p.systemUser) ?? null }));
      const active = new Set(providers.map((p) => p.systemUser));
      for (const [systemUser, lastEventAt] of last) {
        if (lastEventAt !== null && !active.has(systemUser)) providers.push({ systemUser, events: 0, lastEventAt });
      }
      return { buckets: counted.buckets, providers };
    },
  };
}
