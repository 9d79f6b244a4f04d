import type { EventInstant, TripStore, TripVehicle } from '../types.js';
import type { SqliteDatabase } from './database.js';
import type { StoreAccess } from './store-access.js';

interface VehicleRow {
  dominio: string;
  nro_serie: string;
  registered_at: number;
  epoch_ms: number | null;
  sub_ms_ticks: number | null;
}

/** .NET ordinal order: UTF-16 code units, which is what JavaScript's < compares. */
function ordinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function vehicleOf(row: VehicleRow): TripVehicle {
  return {
    dominio: row.dominio,
    nroSerie: row.nro_serie,
    registeredAt: row.registered_at,
    lastReport: row.epoch_ms === null ? null : { epochMs: row.epoch_ms, subMsTicks: row.sub_ms_ticks ?? 0 },
  };
}

export function createTripStore(db: SqliteDatabase, access: StoreAccess): TripStore {
  // Re-registering restarts the registration: new NroSerie, FechaRegistracion = now.
  const upsert = db.prepare<[string, string, string, number]>(
    `INSERT INTO trip_vehicles (system_user, dominio, nro_serie, registered_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (system_user, dominio) DO UPDATE SET nro_serie = excluded.nro_serie, registered_at = excluded.registered_at`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM trip_vehicles WHERE system_user = ? AND dominio = ?');
  const removeAll = db.prepare<[string]>('DELETE FROM trip_vehicles WHERE system_user = ?');
  const selectVehicles = db.prepare<[string], VehicleRow>(
    `SELECT v.dominio, v.nro_serie, v.registered_at, r.epoch_ms, r.sub_ms_ticks
     FROM trip_vehicles v LEFT JOIN last_reports r ON r.system_user = v.system_user AND r.dominio = v.dominio
     WHERE v.system_user = ?`,
  );
  const selectPage = db.prepare<[string, string, number], VehicleRow>(
    `SELECT v.dominio, v.nro_serie, v.registered_at, r.epoch_ms, r.sub_ms_ticks
     FROM trip_vehicles v LEFT JOIN last_reports r ON r.system_user = v.system_user AND r.dominio = v.dominio
     WHERE v.system_user = ? AND v.dominio > ? ORDER BY v.dominio LIMIT ?`,
  );
  const selectVehicle = db.prepare<[string, string], VehicleRow>(
    `SELECT v.dominio, v.nro_serie, v.registered_at, r.epoch_ms, r.sub_ms_ticks
     FROM trip_vehicles v LEFT JOIN last_reports r ON r.system_user = v.system_user AND r.dominio = v.dominio
     WHERE v.system_user = ? AND v.dominio = ?`,
  );
  const selectOne = db.prepare<[string, string], { one: number }>(
    'SELECT 1 AS one FROM trip_vehicles WHERE system_user = ? AND dominio = ?',
  );

  return {
    async addVehicle(systemUser, dominio, nroSerie, now) {
      await access.write(() => upsert.run(systemUser, dominio, nroSerie, now));
    },
    async removeVehicle(systemUser, dominio) {
      return (await access.write(() => remove.run(systemUser, dominio))).changes > 0;
    },
    async listVehicles(systemUser) {
      // Sorted here rather than by SQLite's BINARY collation (UTF-8 bytes), which differs from
      // ordinal order for characters beyond the BMP.
      return access
        .read(() => selectVehicles.all(systemUser))
        .map(vehicleOf)
        .sort((a, b) => ordinal(a.dominio, b.dominio));
    },
    async pageVehicles(systemUser, { afterDominio, limit }) {
      // SQLite's BINARY collation compares UTF-8 bytes: code point order, along the primary key.
      return access.read(() => selectPage.all(systemUser, afterDominio ?? '', limit)).map(vehicleOf);
    },
    async getVehicle(systemUser, dominio) {
      const row = access.read(() => selectVehicle.get(systemUser, dominio));
      return row === undefined ? null : vehicleOf(row);
    },
    async isRegistered(systemUser, dominio) {
      return access.read(() => selectOne.get(systemUser, dominio)) !== undefined;
    },
    async clear(systemUser) {
      return (await access.write(() => removeAll.run(systemUser))).changes;
    },
  };
}

function isLater(a: EventInstant, b: EventInstant): boolean {
  return a.epochMs > b.epochMs || (a.epochMs === b.epochMs && a.subMsTicks > b.subMsTicks);
}

/**
 * Writes last_reports from inside the event log's transaction. Takes the latest instant per
 * provider and Dominio of one group, so a burst from one vehicle costs one upsert, and only ever
 * moves a stored instant forward (events arrive out of order after a device reconnects).
 */
/** Moves a vehicle's last report forward only (a late, older event never moves it back). */
export const UPSERT_LAST_REPORT_SQL = `INSERT INTO last_reports (system_user, dominio, epoch_ms, sub_ms_ticks) VALUES (?, ?, ?, ?)
     ON CONFLICT (system_user, dominio) DO UPDATE SET epoch_ms = excluded.epoch_ms, sub_ms_ticks = excluded.sub_ms_ticks
     WHERE (excluded.epoch_ms, excluded.sub_ms_ticks) > (last_reports.epoch_ms, last_reports.sub_ms_ticks)`;

export interface LastReport {
  systemUser: string;
  dominio: string;
  instant: EventInstant;
}

/** Folds one event into a group's per-vehicle latest instants. */
export function noteReport(latest: Map<string, LastReport>, systemUser: string, dominio: string, instant: EventInstant): void {
  // The length prefix makes the pair unambiguous whatever characters either part holds.
  const key = `${systemUser.length}:${systemUser}${dominio}`;
  const current = latest.get(key);
  if (current === undefined || isLater(instant, current.instant)) latest.set(key, { systemUser, dominio, instant });
}
