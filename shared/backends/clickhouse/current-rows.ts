import { createHash } from 'node:crypto';
import { compileFunction, EVENT_FIELD_LIST, property, type EventField, type KeyValue } from '../../events/schema.js';
import type { EventInstant, StoredEvent } from '../types.js';
import type { ClickHouseColumn, EventRowCodec, StoredRow } from './rows.js';
import { wellFormed } from './sql.js';

/**
 * The `events` table of the current schema (ClickHouse 24.8 and later), derived from EVENT_FIELDS
 * like the 18.16 one (rows.ts): the same fields, rendered with what current releases offer.
 *
 * - An instant is one `DateTime64(7, 'UTC')`: .NET's 100 ns over 0001-01-01 .. 9999-12-31, the
 *   whole range a .NET DateTime holds, so nothing is clamped (18.16 splits it into three columns).
 * - A field marked `lowCardinality` is `LowCardinality(String)`.
 * - A field marked `hash64` (the dedupe key) is a UInt64: the first 8 bytes of SHA-256 of its text.
 *   It is only ever grouped or compared within one provider and Dominio (query 8 of
 *   docs/analytics.md), never part of the sorting key, so a collision can never merge two rows
 *   away: at worst two different events of one vehicle look like a resend. Odds for a vehicle with
 *   n stored events: about n^2 / 2^65, 3e-6 at ten million events.
 * - Codecs were chosen by measurement (bench/clickhouse-schemas.ts, figures in bench/RESULTS.md).
 *
 * The text rows (TabSeparated, JSONEachRow; the worker sends RowBinary, row-binary.ts) carry
 * instants as `YYYY-MM-DD hh:mm:ss.fffffff` text (UTC), which DateTime64 parses over its whole
 * range; a number would be read as seconds.
 */

/** Codec of each kind's columns (measured: bench/clickhouse-schemas.ts, figures in bench/RESULTS.md). */
const CODEC = {
  text: 'CODEC(ZSTD(1))',
  real: 'CODEC(ZSTD(1))',
  int: 'CODEC(ZSTD(1))',
  /** 64-bit times (DateTime64) and ids: rows of one vehicle follow each other in time. */
  time64: 'CODEC(Delta(8), ZSTD(1))',
  /** DateTime (32-bit). */
  time32: 'CODEC(Delta(4), ZSTD(1))',
} as const;

const DT7 = "DateTime64(7, 'UTC')";
const DT3 = "DateTime64(3, 'UTC')";

/**
 * Columns whose measured best codec differs from their kind's (bench:clickhouse, 1,000,000 events
 * sorted by vehicle and time): coordinates of one vehicle follow each other closely, which FPC
 * predicts better than ZSTD alone (figures in bench/RESULTS.md); Dominio and NroSerie repeat in
 * long runs, which ClickHouse's default LZ4 stores smaller than ZSTD(1) (an empty string: no CODEC
 * clause, the default).
 */
const CODEC_BY_COLUMN: Readonly<Record<string, string>> = {
  latitud: 'CODEC(FPC(12), ZSTD(1))',
  longitud: 'CODEC(FPC(12), ZSTD(1))',
  dominio: '',
  nro_serie: '',
};

function fieldColumns(f: EventField): ClickHouseColumn[] {
  return plainFieldColumns(f).map((col) => {
    const codec = CODEC_BY_COLUMN[col.name];
    return codec === undefined ? col : { name: col.name, type: `${col.type.replace(/ CODEC\(.*\)$/, '')}${codec === '' ? '' : ` ${codec}`}` };
  });
}

function plainFieldColumns(f: EventField): ClickHouseColumn[] {
  const c = f.clickhouseColumn;
  const n = (type: string): string => (f.nullable ? `Nullable(${type})` : type);
  switch (f.kind) {
    case 'text':
      if (f.hash64) return [{ name: c, type: 'UInt64' }];
      return [{ name: c, type: f.lowCardinality ? `LowCardinality(${n('String')})` : `${n('String')} ${CODEC.text}` }];
    case 'real':
      return [{ name: c, type: `${n('Float64')} ${CODEC.real}` }];
    case 'int':
      return [{ name: c, type: `${n('Int64')} ${CODEC.int}` }];
    case 'bool':
      return [{ name: c, type: n('Bool') }];
    case 'epochMs':
      return [{ name: c, type: `${n(DT3)} ${CODEC.time64}` }];
    case 'instant':
      return [{ name: c, type: `${n(DT7)} ${CODEC.time64}` }];
    case 'pairs':
      return [
        { name: `${c}_keys`, type: 'Array(LowCardinality(String))' },
        { name: `${c}_values`, type: `Array(String) ${CODEC.text}` },
      ];
  }
}

/** Every column of the current `events`: `id`, the fields', `stored_at`. */
export function currentEventColumns(fields: readonly EventField[] = EVENT_FIELD_LIST): ClickHouseColumn[] {
  return [{ name: 'id', type: `UInt64 ${CODEC.time64}` }, ...fields.flatMap(fieldColumns), { name: 'stored_at', type: `DateTime('UTC') ${CODEC.time32}` }];
}

/** ALTER statements adding a field added later to the current `events`, the migration its `since` derives (see addColumnSql in rows.ts). */
export function addCurrentColumnSql(field: EventField): string[] {
  if (field.whenAbsent === undefined) throw new Error(`event field ${field.name} is not added later: the first release's columns are in the first migration`);
  return fieldColumns(field).map((c) => `ALTER TABLE {db}.events ADD COLUMN IF NOT EXISTS ${c.name} ${c.type}`);
}

// ---- instants as DateTime64 text ------------------------------------------------------------------

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z in epoch ms: what a .NET DateTime spans. */
export const MIN_INSTANT_MS = -62_135_596_800_000;
export const MAX_INSTANT_MS = 253_402_300_799_999;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

// A batch shares few distinct seconds (received_at, stored_at): remember recent ones.
const secondsCache = new Map<number, string>();

/** `YYYY-MM-DD hh:mm:ss` (UTC) of whole epoch seconds, any year 1..9999. */
function secondsText(seconds: number): string {
  const cached = secondsCache.get(seconds);
  if (cached !== undefined) return cached;
  const d = new Date(seconds * 1000);
  const text = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  if (secondsCache.size >= 4096) secondsCache.clear();
  secondsCache.set(seconds, text);
  return text;
}

const clampMs = (ms: number): number => Math.min(MAX_INSTANT_MS, Math.max(MIN_INSTANT_MS, ms));

/** DateTime64(3) text of epoch ms (floor to the second, so negative instants read right). */
function dateTime64MsText(epochMs: number): string {
  const ms = clampMs(epochMs);
  const seconds = Math.floor(ms / 1000);
  return `${secondsText(seconds)}.${pad(ms - seconds * 1000, 3)}`;
}

/**
 * DateTime64(7) text of an instant: exact from 0001-01-01 to 9999-12-31 (a .NET DateTime's
 * range); an instant outside, which no .NET client can send, is held at the nearest end.
 */
export function dateTime64Text(instant: EventInstant): string {
  const inside = instant.epochMs >= MIN_INSTANT_MS && instant.epochMs <= MAX_INSTANT_MS;
  const ticks = inside ? instant.subMsTicks : instant.epochMs < MIN_INSTANT_MS ? 0 : 9999;
  return `${dateTime64MsText(instant.epochMs)}${pad(ticks, 4)}`;
}

/** An instant from the Int64 of a DateTime64(7) (100 ns since the epoch), as decimal text. */
export function instantFromTicks(text: string): EventInstant {
  const t = BigInt(text);
  const sub = ((t % 10_000n) + 10_000n) % 10_000n;
  return { epochMs: Number((t - sub) / 10_000n), subMsTicks: Number(sub) };
}

/** The 64-bit dedupe hash, as decimal text: the first 8 bytes of SHA-256 of the text, big-endian. */
export function hash64(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest().readBigUInt64BE(0).toString();
}

// ---- row codec --------------------------------------------------------------------------------

const clave = (pair: KeyValue): string => wellFormed(pair.clave);
const valor = (pair: KeyValue): string => wellFormed(pair.valor);

function columnValues(f: EventField, v: string): string[] {
  const orNull = (expression: string): string => (f.nullable ? `(${v} === null ? null : ${expression})` : expression);
  switch (f.kind) {
    case 'text':
      return [orNull(f.hash64 ? `hash64(${v})` : `wellFormed(${v})`)];
    case 'real':
      return [v];
    case 'int':
      return [orNull(`String(Math.trunc(${v}))`)];
    case 'bool':
      return [v];
    case 'epochMs':
      return [orNull(`dateTime64MsText(${v})`)];
    case 'instant':
      return [orNull(`dateTime64Text(${v})`)];
    case 'pairs':
      return [`${v}.map(clave)`, `${v}.map(valor)`];
  }
}

/** What `fromRow` reads of a field, as SELECT expressions; instants as their Int64 of 100 ns. */
function readColumns(f: EventField): string[] {
  const c = f.clickhouseColumn;
  switch (f.kind) {
    case 'instant':
    case 'epochMs':
      return [f.nullable ? `if(isNull(${c}), NULL, toString(reinterpretAsInt64(assumeNotNull(${c})))) AS ${c}__raw` : `toString(reinterpretAsInt64(${c})) AS ${c}__raw`];
    case 'pairs':
      return [`${c}_keys`, `${c}_values`];
    default:
      return [c];
  }
}

/** The key of a read column in a JSONEachRow result row. */
const readKey = (column: string): string => column.replace(/^.* AS /, '');

/**
 * Row codec of the current `events`. A field marked `hash64` cannot be read back: the admin view
 * (which hides it) gets an empty string. Nullable columns of a non-null reading come back as null;
 * instants and epoch ms are read as their raw Int64, so no range or rounding question arises.
 */
export function currentRowCodec(fields: readonly EventField[] = EVENT_FIELD_LIST): EventRowCodec {
  const names = currentEventColumns(fields).map((c) => JSON.stringify(c.name));
  const values = ['id.toString()', ...fields.flatMap((f) => columnValues(f, property('e', f.name))), 'secondsText(Math.floor(storedAt / 1000))'];
  const toRow = compileFunction<EventRowCodec['toRow']>(['id', 'e', 'storedAt'], `return { ${names.map((n, i) => `${n}: ${values[i]}`).join(', ')} };`, {
    wellFormed,
    hash64,
    dateTime64MsText,
    dateTime64Text,
    secondsText,
    clave,
    valor,
  });
  const read = fields.filter((f) => !f.hash64).map((f) => ({ f, keys: readColumns(f).map(readKey) }));

  function fromRow(row: StoredRow): StoredEvent {
    const event: Record<string, unknown> = { id: BigInt(row.id as string) };
    for (const f of fields) if (f.hash64) event[f.name] = '';
    for (const { f, keys } of read) {
      const value = row[keys[0]!];
      if (value === null || value === undefined) {
        event[f.name] = null;
        continue;
      }
      switch (f.kind) {
        case 'text':
        case 'real':
        case 'bool':
          event[f.name] = value;
          break;
        case 'int':
          event[f.name] = Number(value);
          break;
        case 'epochMs':
          event[f.name] = Number(BigInt(value as string));
          break;
        case 'instant':
          event[f.name] = instantFromTicks(value as string);
          break;
        case 'pairs': {
          const pairValues = row[keys[1]!] as string[];
          event[f.name] = (value as string[]).map((k, i) => ({ clave: k, valor: pairValues[i] ?? '' }));
          break;
        }
      }
    }
    event.storedAt = Number(row.stored_at_epoch) * 1000;
    return event as unknown as StoredEvent;
  }

  const storedColumns = ['id', ...fields.filter((f) => !f.hash64).flatMap(readColumns), 'toUInt32(stored_at) AS stored_at_epoch'];
  return { toRow, storedColumns, fromRow };
}

/** The codec of EVENT_FIELDS for the current schema. */
export const CURRENT_ROWS: EventRowCodec = currentRowCodec();
