import { compileFunction, EVENT_FIELD_LIST, property, type EventField, type KeyValue } from '../../events/schema.js';
import type { EventRecord, StoredEvent } from '../types.js';
import { wellFormed } from './sql.js';

/**
 * The `events` table's row codecs, derived from EVENT_FIELDS (shared/events/schema.ts). The table
 * itself is created by MIGRATIONS (schema.ts, never edited once shipped);
 * test/scale-out/event-schema-clickhouse.scale-out.test.ts checks that what they create on the real server is
 * exactly `eventColumns()`.
 *
 * These text rows serve the TabSeparated and JSONEachRow inserts (tests, bench:worker; the worker
 * sends RowBinary, row-binary.ts, which stores the same values). Times are `YYYY-MM-DD hh:mm:ss`
 * text in UTC, which every ClickHouse release parses without settings; 64-bit integers decimal
 * text, which both text formats accept for numeric columns.
 */
export type EventRowValue = string | number | null | string[];
/** One row of the `events` table, by column name. */
export type EventRow = Record<string, EventRowValue>;

export interface ClickHouseColumn {
  name: string;
  type: string;
}

/**
 * DateTime covers 1970-01-01 00:00:00 .. 2105-12-31 23:59:59 on ClickHouse 18.16 (later second
 * values wrap around to 1970 there). Instants outside are clamped in the DateTime columns; the
 * exact instant is always in the `*_ms` / `*_ticks` columns.
 */
const DATETIME_MIN_SECONDS = 0;
const DATETIME_MAX_SECONDS = 4_291_747_199;

/** Epoch seconds clamped to the DateTime range (floor, so 1969-12-31T23:59:59.5 is 0). */
export function dateTimeSeconds(epochMs: number): number {
  const s = Math.floor(epochMs / 1000);
  return Math.min(DATETIME_MAX_SECONDS, Math.max(DATETIME_MIN_SECONDS, s));
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

// Rows of one batch share few distinct seconds (stored_at, received_at): remember recent ones.
const dateTimeCache = new Map<number, string>();

/** `YYYY-MM-DD hh:mm:ss` in UTC of an epoch-ms instant, clamped to the DateTime range. */
function dateTimeText(epochMs: number): string {
  const seconds = dateTimeSeconds(epochMs);
  const cached = dateTimeCache.get(seconds);
  if (cached !== undefined) return cached;
  const d = new Date(seconds * 1000);
  const text = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())}`;
  if (dateTimeCache.size >= 4096) dateTimeCache.clear();
  dateTimeCache.set(seconds, text);
  return text;
}

/** toYYYYMM of the clamped DateTime of an instant: of `received_at`, the partition an 18.16 row lands in (migration 3). */
export function partitionMonth(epochMs: number): number {
  const d = new Date(dateTimeSeconds(epochMs) * 1000);
  return d.getUTCFullYear() * 100 + d.getUTCMonth() + 1;
}

const whole = (n: number): string => String(Math.trunc(n));
const clave = (pair: KeyValue): string => wellFormed(pair.clave);
const valor = (pair: KeyValue): string => wellFormed(pair.valor);
const DATE_TIME = "DateTime('UTC')";

/** The columns of one field, by kind (see KindValue in schema.ts); `*_ms` and `*_ticks` are exact. */
function fieldColumns(f: EventField): ClickHouseColumn[] {
  const c = f.clickhouseColumn;
  const n = (type: string): string => (f.nullable ? `Nullable(${type})` : type);
  switch (f.kind) {
    case 'text':
      return [{ name: c, type: n('String') }];
    case 'real':
      return [{ name: c, type: n('Float64') }];
    case 'int':
      return [{ name: c, type: n('Int64') }];
    case 'bool':
      return [{ name: c, type: n('UInt8') }];
    case 'epochMs':
      return [
        { name: c, type: n(DATE_TIME) },
        { name: `${c}_ms`, type: n('Int64') },
      ];
    case 'instant':
      return [
        { name: c, type: n(DATE_TIME) },
        { name: `${c}_ms`, type: n('Int64') },
        { name: `${c}_ticks`, type: n('UInt16') },
      ];
    case 'pairs':
      return [
        { name: `${c}_keys`, type: 'Array(String)' },
        { name: `${c}_values`, type: 'Array(String)' },
      ];
  }
}

/** Every column of `events`: `id`, the fields', `stored_at` (when the worker inserted the row). */
export function eventColumns(fields: readonly EventField[] = EVENT_FIELD_LIST): ClickHouseColumn[] {
  return [{ name: 'id', type: 'UInt64' }, ...fields.flatMap(fieldColumns), { name: 'stored_at', type: DATE_TIME }];
}

/**
 * The statements adding a field added later to `{db}.events`, the migration its `since` derives
 * (MIGRATIONS in schema.ts), one column each (18.16 has no ADD COLUMN IF NOT EXISTS: migrate()
 * takes "already exists" as done). No DEFAULT: the type's own default is the field's zero, which
 * is also what an older worker's inserts, which leave the column out, store.
 */
export function addColumnSql(field: EventField): string[] {
  if (field.whenAbsent === undefined) throw new Error(`event field ${field.name} is not added later: the first release's columns are in migration 1`);
  return fieldColumns(field).map((c) => `ALTER TABLE {db}.events ADD COLUMN ${c.name} ${c.type}`);
}

/** A row as `SELECT ${storedColumns}` returns it in JSONEachRow. */
export type StoredRow = Readonly<Record<string, unknown>>;

export interface EventRowCodec {
  toRow: (id: bigint, e: EventRecord, storedAt: number) => EventRow;
  /**
   * The columns `recent()` reads. (U)Int64 columns come back as decimal text with
   * `output_format_json_quote_64bit_integers = 1`. No alias reuses a column name: ClickHouse aliases
   * are visible in WHERE and ORDER BY too.
   */
  storedColumns: readonly string[];
  fromRow: (row: StoredRow) => StoredEvent;
}

/** What `fromRow` reads of a field: the exact columns (never a clamped DateTime). */
function readColumns(f: EventField): string[] {
  const c = f.clickhouseColumn;
  switch (f.kind) {
    case 'epochMs':
      return [`${c}_ms`];
    case 'instant':
      return [`${c}_ms`, `${c}_ticks`];
    case 'pairs':
      return [`${c}_keys`, `${c}_values`];
    default:
      return [c];
  }
}

/** The JavaScript expressions of a field's column values, in fieldColumns() order, given the expression `v` of its value. */
function columnValues(f: EventField, v: string): string[] {
  const orNull = (expression: string): string => (f.nullable ? `(${v} === null ? null : ${expression})` : expression);
  switch (f.kind) {
    case 'text':
      return [orNull(`wellFormed(${v})`)];
    case 'real':
      return [v];
    case 'int':
      return [orNull(`whole(${v})`)];
    case 'bool':
      return [orNull(`${v} ? 1 : 0`)];
    case 'epochMs':
      return [orNull(`dateTimeText(${v})`), orNull(`whole(${v})`)];
    case 'instant':
      return [orNull(`dateTimeText(${v}.epochMs)`), orNull(`whole(${v}.epochMs)`), orNull(`${v}.subMsTicks`)];
    case 'pairs':
      return [`${v}.map(clave)`, `${v}.map(valor)`];
  }
}

export function eventRowCodec(fields: readonly EventField[] = EVENT_FIELD_LIST): EventRowCodec {
  const read = fields.map(readColumns);
  // Compiled once (see shared/events/schema.ts): toRow runs per event in the worker, and the
  // literal gives every row one shape, which JSON.stringify (run by the client) serialises fast.
  const names = eventColumns(fields).map((c) => JSON.stringify(c.name));
  const values = ['id.toString()', ...fields.flatMap((f) => columnValues(f, property('e', f.name))), 'dateTimeText(storedAt)'];
  const toRow = compileFunction<EventRowCodec['toRow']>(['id', 'e', 'storedAt'], `return { ${names.map((n, i) => `${n}: ${values[i]}`).join(', ')} };`, {
    wellFormed,
    whole,
    dateTimeText,
    clave,
    valor,
  });

  function fromRow(row: StoredRow): StoredEvent {
    const event: Record<string, unknown> = { id: BigInt(row.id as string) };
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      const columns = read[i]!;
      const value = row[columns[0]!];
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
          event[f.name] = value !== 0;
          break;
        case 'instant':
          event[f.name] = { epochMs: Number(value), subMsTicks: (row[columns[1]!] as number | null) ?? 0 };
          break;
        case 'pairs': {
          const values = row[columns[1]!] as string[];
          event[f.name] = (value as string[]).map((clave, k) => ({ clave, valor: values[k] ?? '' }));
          break;
        }
      }
    }
    event.storedAt = Number(row.stored_at_epoch) * 1000;
    return event as unknown as StoredEvent;
  }

  const storedColumns = ['id', ...read.flat(), 'toUInt32(stored_at) AS stored_at_epoch'];
  return { toRow, storedColumns, fromRow };
}

/** The codec of EVENT_FIELDS. */
export const EVENT_ROWS: EventRowCodec = eventRowCodec();
export const toRow = EVENT_ROWS.toRow;
