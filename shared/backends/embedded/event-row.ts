import { compileFunction, EVENT_FIELD_LIST, invalidField, isFieldValue, property, recordCheck, type EventField, type KeyValue } from '../../events/schema.js';
import type { EventRecord, StoredEvent } from '../types.js';
import type { EventRowValue } from './writer-thread.js';

/**
 * The `events` table's row codec, derived from EVENT_FIELDS (shared/events/schema.ts). The table
 * itself is created by MIGRATIONS (database.ts, never edited once shipped); test/unit/shared/events/schema.unit.test.ts
 * checks that what they create is exactly `eventColumns()`.
 */

interface SqliteColumn {
  name: string;
  type: 'TEXT' | 'REAL' | 'INTEGER';
  notNull: boolean;
}

/** A column as written in CREATE TABLE or ALTER TABLE ... ADD COLUMN (a new NOT NULL column also needs a DEFAULT). */
export function columnDefinition(c: SqliteColumn): string {
  return `${c.name} ${c.type}${c.notNull ? ' NOT NULL' : ''}`;
}

const literal = (value: EventRowValue): string => (typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : String(value));

/**
 * The statements adding a field added later to an existing `events` table, the migration its
 * `since` derives (MIGRATIONS in database.ts): its columns, NOT NULL ones with its zero as DEFAULT
 * (SQLite requires one).
 */
export function addColumnSql(field: EventField): string[] {
  if (field.whenAbsent === undefined) throw new Error(`event field ${field.name} is not added later: the first release's columns are in migration 1`);
  const zero = { [field.name]: field.whenAbsent } as unknown as EventRecord;
  const values = eventRowCodec([field]).toRow(0n, zero, 0).slice(1, -1);
  return fieldColumns(field).map((c, i) => {
    const value = values[i] ?? null;
    return `ALTER TABLE events ADD COLUMN ${columnDefinition(c)}${value === null ? '' : ` DEFAULT ${literal(value)}`};`;
  });
}

/** The columns of one field, by kind (see KindValue in schema.ts). */
function fieldColumns(f: EventField): SqliteColumn[] {
  const notNull = !f.nullable;
  const one = (type: SqliteColumn['type']): SqliteColumn[] => [{ name: f.column, type, notNull }];
  switch (f.kind) {
    case 'text':
    case 'pairs':
      return one('TEXT');
    case 'real':
      return one('REAL');
    case 'int':
    case 'bool':
    case 'epochMs':
      return one('INTEGER');
    case 'instant':
      return [
        { name: `${f.column}_ms`, type: 'INTEGER', notNull },
        { name: `${f.column}_ticks`, type: 'INTEGER', notNull },
      ];
  }
}

/** Every column of `events` in row order: `id` (the rowid), the fields', `stored_at`. */
export function eventColumns(fields: readonly EventField[] = EVENT_FIELD_LIST): SqliteColumn[] {
  return [
    { name: 'id', type: 'INTEGER', notNull: true },
    ...fields.flatMap(fieldColumns),
    { name: 'stored_at', type: 'INTEGER', notNull: true },
  ];
}

/** One row's values, in eventColumns() order. */
type EventRow = EventRowValue[];

/** The INSERT, the row encoder and decoder, and the storability check for one field table. */
interface EventRowCodec {
  insertSql: string;
  /** One INSERT of `rows` rows (a writer binds a group in chunks: one statement step per chunk, not per row). */
  insertRowsSql: (rows: number) => string;
  toRow: (id: bigint, e: EventRecord, storedAt: number) => EventRow;
  /** A row read with safeIntegers (`SELECT *`): INTEGER columns are bigints. */
  fromRow: (row: Readonly<Record<string, unknown>>) => StoredEvent;
  /** Throws a TypeError naming the first field a store could not hold. */
  checkStorable: (e: EventRecord) => void;
}

/** Stored pairs hold strings; anything else (a hand-edited row) is kept readable, not lost. */
const pairText = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));

function parsePairs(text: string): KeyValue[] {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) return [];
  return parsed.map((item: unknown) => {
    const { clave, valor } = (item ?? {}) as { clave?: unknown; valor?: unknown };
    return { clave: pairText(clave), valor: pairText(valor) };
  });
}

const pairsText = (pairs: readonly KeyValue[]): string => JSON.stringify(pairs.map(({ clave, valor }) => ({ clave, valor })));

/** The JavaScript expressions of a field's column values, in fieldColumns() order, given the expression `v` of its value. */
function columnValues(f: EventField, v: string): string[] {
  const orNull = (expression: string): string => (f.nullable ? `(${v} === null ? null : ${expression})` : expression);
  switch (f.kind) {
    case 'bool':
      return [orNull(`${v} ? 1 : 0`)];
    case 'instant':
      return [orNull(`${v}.epochMs`), orNull(`${v}.subMsTicks`)];
    case 'pairs':
      return [`pairsText(${v})`];
    case 'text':
    case 'real':
    case 'int':
    case 'epochMs':
      return [v];
  }
}

export function eventRowCodec(fields: readonly EventField[] = EVENT_FIELD_LIST): EventRowCodec {
  const columns = eventColumns(fields);
  const head = `INSERT INTO events (${columns.map((c) => c.name).join(', ')}) VALUES `;
  const placeholders = `(${columns.map(() => '?').join(', ')})`;
  const insertRowsSql = (rows: number): string => head + Array<string>(rows).fill(placeholders).join(', ');
  const insertSql = insertRowsSql(1);
  const storable = recordCheck(fields, (f) => f.name);
  // Compiled once (see schema.ts): the row builder runs per event at tens of thousands a second.
  const rowValues = fields.flatMap((f) => columnValues(f, property('e', f.name)));
  const toRow = compileFunction<EventRowCodec['toRow']>(['id', 'e', 'storedAt'], `return [id, ${rowValues.join(', ')}, storedAt];`, { pairsText });

  /** The column holding each field's value (an instant's ms; its ticks are `${column}_ticks`). */
  const valueColumns = fields.map((f) => (f.kind === 'instant' ? `${f.column}_ms` : f.column));

  function fromRow(row: Readonly<Record<string, unknown>>): StoredEvent {
    const event: Record<string, unknown> = { id: row.id };
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      const value = row[valueColumns[i]!];
      if (value === null) {
        event[f.name] = null;
        continue;
      }
      switch (f.kind) {
        case 'text':
        case 'real':
          event[f.name] = value;
          break;
        case 'int':
        case 'epochMs':
          event[f.name] = Number(value);
          break;
        case 'bool':
          event[f.name] = value !== 0n;
          break;
        case 'instant':
          event[f.name] = { epochMs: Number(value), subMsTicks: Number(row[`${f.column}_ticks`] ?? 0n) };
          break;
        case 'pairs':
          event[f.name] = parsePairs(value as string);
          break;
      }
    }
    event.storedAt = Number(row.stored_at);
    return event as unknown as StoredEvent;
  }

  /**
   * What SQLite would refuse (a NaN binds as NULL into a NOT NULL column, a fraction into INTEGER
   * fails a STRICT table). The operation layer validates first; this catches a bug there before
   * the bad event can fail the commit of every other caller's events in its group.
   */
  function checkStorable(e: EventRecord): void {
    if (storable(e)) return;
    const f = fields.find((field) => !isFieldValue(field, e[field.name]))!;
    throw new TypeError(`Event for ${e.systemUser}/${e.dominio} cannot be stored: ${invalidField(f, e[f.name])}.`);
  }

  return { insertSql, insertRowsSql, toRow, fromRow, checkStorable };
}

/** The codec of EVENT_FIELDS. */
export const EVENT_ROWS: EventRowCodec = eventRowCodec();
