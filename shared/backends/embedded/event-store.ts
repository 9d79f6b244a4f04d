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

export function createEventStore(db: SqliteDatabase, access: StoreAccess): EventStore {
  // One statement per filter combination, so each gets its own plan (events_by_provider when the
  // provider is given; the rowid, newest first, otherwise).
  const prepare = (where: string) =>
    db.prepare<unknown[], StoredRow>(`SELECT * FROM events ${where} ORDER BY id DESC LIMIT ?`).safeIntegers();
  const all = prepare('');
  const byProvider = prepare('WHERE system_user = ?');
  const byDominio = prepare('WHERE dominio = ?');
  const byBoth = prepare('WHERE system_user = ? AND dominio = ?');

  return {
    async recent(query: EventQuery) {
      // LIMIT -1 is SQLite for "no limit".
      const limit = query.limit === Infinity ? -1 : Math.floor(query.limit);
      if (!(limit > 0 || limit === -1)) return [];
      const { provider, dominio } = query;
      const rows = access.read(() =>
        provider !== undefined && dominio !== undefined
          ? byBoth.all(provider, dominio, limit)
          : provider !== undefined
            ? byProvider.all(provider, limit)
            : dominio !== undefined
              ? byDominio.all(dominio, limit)
              : all.all(limit),
      );
      return rows.map(fromRow);
    },
  };
}
