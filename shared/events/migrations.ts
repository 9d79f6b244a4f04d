import { EVENT_FIELD_LIST, FIRST_VERSION, type EventField } from './schema.js';

/**
 * The migrations that add the event fields declared after the first release, derived from each
 * field's `since` (field-spec.ts) so that no store's migration is written by hand for a field. A
 * store's list is its hand-written migrations plus one migration per version that added fields,
 * made by the store from those fields (backends/embedded/database.ts, backends/clickhouse/schema.ts
 * and schema-current.ts). Versions are shared: a field's version is the same in every store (the
 * current ClickHouse schema counts from 100), so it must be one no store has used; a shipped
 * migration, hand-written or derived, never changes (its text comes from the field's kind and
 * column, which never change in place: docs/architecture.md §Adding an event field).
 */

/** A migration of any store: what the merge needs to know of it. */
interface Versioned {
  readonly version: number;
}

/** The fields each schema version added after the first release, by version ascending (each in table order). */
export function fieldAdditions(fields: readonly EventField[] = EVENT_FIELD_LIST): { version: number; fields: EventField[] }[] {
  const byVersion = new Map<number, EventField[]>();
  for (const f of fields) {
    if (!Number.isSafeInteger(f.since) || f.since < FIRST_VERSION) throw new Error(`event field ${f.name}: since must be a whole schema version above ${FIRST_VERSION}, got ${f.since}`);
    if (f.since === FIRST_VERSION) continue;
    byVersion.set(f.since, [...(byVersion.get(f.since) ?? []), f]);
  }
  return [...byVersion.entries()].sort(([a], [b]) => a - b).map(([version, added]) => ({ version, fields: added }));
}

/**
 * `handWritten` with the migrations of the fields added later, in version order: for each version
 * of fieldAdditions, `make(offset + version, fields)`. Throws, naming the field, when a field's
 * version is one a hand-written migration of `store` has (the field must take a version no store
 * has used).
 */
export function withFieldMigrations<M extends Versioned>(
  store: string,
  handWritten: readonly M[],
  make: (version: number, fields: readonly EventField[]) => M,
  options: { offset?: number; fields?: readonly EventField[] } = {},
): M[] {
  const offset = options.offset ?? 0;
  const taken = new Set(handWritten.map((m) => m.version));
  const derived = fieldAdditions(options.fields).map(({ version, fields }) => {
    if (taken.has(offset + version)) {
      const highest = Math.max(...taken) - offset;
      throw new Error(
        `event field ${fields.map((f) => f.name).join(', ')}: since ${version} is the version of a hand-written ${store} migration; ` +
          `give it a version no store has used (above ${highest} for ${store}).`,
      );
    }
    return make(offset + version, fields);
  });
  return [...handWritten, ...derived].sort((a, b) => a.version - b.version);
}
