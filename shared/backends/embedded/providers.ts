import type { Provider, ProviderPatch, ProviderStore } from '../types.js';
import type { SqliteDatabase } from './database.js';
import type { StoreAccess } from './store-access.js';

interface ProviderRow {
  system_user: string;
  password_hash: string;
  enabled: number;
  time_zone: string | null;
  require_registered_vehicles: number;
  created_at: number;
  updated_at: number;
}

function fromRow(row: ProviderRow): Provider {
  return {
    systemUser: row.system_user,
    passwordHash: row.password_hash,
    enabled: row.enabled !== 0,
    timeZone: row.time_zone,
    requireRegisteredVehicles: row.require_registered_vehicles !== 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toParams(p: Provider): ProviderRow {
  return {
    system_user: p.systemUser,
    password_hash: p.passwordHash,
    enabled: p.enabled ? 1 : 0,
    time_zone: p.timeZone,
    require_registered_vehicles: p.requireRegisteredVehicles ? 1 : 0,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

export function createProviderStore(db: SqliteDatabase, access: StoreAccess): ProviderStore {
  const insert = db.prepare<ProviderRow>(
    `INSERT INTO providers (system_user, password_hash, enabled, time_zone, require_registered_vehicles, created_at, updated_at)
     VALUES (@system_user, @password_hash, @enabled, @time_zone, @require_registered_vehicles, @created_at, @updated_at)
     ON CONFLICT (system_user) DO NOTHING`,
  );
  const select = db.prepare<[string], ProviderRow>('SELECT * FROM providers WHERE system_user = ?');
  const selectAll = db.prepare<[], ProviderRow>('SELECT * FROM providers ORDER BY system_user');
  const remove = db.prepare<[string]>('DELETE FROM providers WHERE system_user = ?');
  const save = db.prepare<ProviderRow>(
    `UPDATE providers SET password_hash = @password_hash, enabled = @enabled, time_zone = @time_zone,
       require_registered_vehicles = @require_registered_vehicles, updated_at = @updated_at
     WHERE system_user = @system_user`,
  );

  // Read-modify-write in one transaction so two concurrent patches cannot lose each other's fields.
  const applyPatch = db.transaction((systemUser: string, patch: ProviderPatch, now: number): Provider | null => {
    const row = select.get(systemUser);
    if (row === undefined) return null;
    const current = fromRow(row);
    const updated: Provider = {
      ...current,
      // A key present with the value undefined means "not patched".
      passwordHash: patch.passwordHash ?? current.passwordHash,
      enabled: patch.enabled ?? current.enabled,
      timeZone: patch.timeZone === undefined ? current.timeZone : patch.timeZone,
      requireRegisteredVehicles: patch.requireRegisteredVehicles ?? current.requireRegisteredVehicles,
      updatedAt: now,
    };
    save.run(toParams(updated));
    return updated;
  });

  return {
    async create(provider) {
      const { changes } = await access.write(() => insert.run(toParams(provider)));
      return changes === 0 ? null : { ...provider };
    },
    async get(systemUser) {
      const row = access.read(() => select.get(systemUser));
      return row === undefined ? null : fromRow(row);
    },
    async update(systemUser, patch, now) {
      return access.write(() => applyPatch.immediate(systemUser, patch, now));
    },
    async list() {
      return access.read(() => selectAll.all()).map(fromRow);
    },
    async delete(systemUser) {
      return (await access.write(() => remove.run(systemUser))).changes > 0;
    },
  };
}
