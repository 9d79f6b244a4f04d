import type { EventInstant, EventRecord, StoredEvent } from '../types.js';
import { wellFormed } from './sql.js';

/**
 * One row of the `events` table as sent with `FORMAT JSONEachRow` (see schema.ts). Times are sent
 * as `YYYY-MM-DD hh:mm:ss` text in UTC, which every ClickHouse release parses without settings;
 * 64-bit integers as decimal text, which JSONEachRow accepts for numeric columns.
 */
export interface EventRow {
  id: string;
  system_user: string;
  dominio: string;
  nro_serie: string;
  codigo: string;
  latitud: number;
  longitud: number;
  altitud: number;
  velocidad: number;
  rumbo: number | null;
  valid_position: 0 | 1;
  valido: 0 | 1 | null;
  event_time_text: string;
  event_time: string;
  event_time_ms: string;
  event_time_ticks: number;
  reception_time_text: string | null;
  reception_time: string | null;
  reception_time_ms: string | null;
  reception_time_ticks: number | null;
  received_at: string;
  received_at_ms: string;
  crudo: string | null;
  sensor_keys: string[];
  sensor_values: string[];
  operation: string;
  dedupe_key: string;
  stored_at: string;
}

/**
 * DateTime covers 1970-01-01 00:00:00 .. 2105-12-31 23:59:59 on ClickHouse 18.16 (later second
 * values wrap around to 1970 there). Instants outside are clamped in the DateTime columns; the
 * exact instant is always in the `*_ms` / `*_ticks` columns.
 */
export const DATETIME_MIN_SECONDS = 0;
export const DATETIME_MAX_SECONDS = 4_291_747_199;

/** Epoch seconds clamped to the DateTime range (floor, so 1969-12-31T23:59:59.5 is 0). */
export function dateTimeSeconds(epochMs: number): number {
  const s = Math.floor(epochMs / 1000);
  return Math.min(DATETIME_MAX_SECONDS, Math.max(DATETIME_MIN_SECONDS, s));
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

// Rows of one batch share few distinct seconds (stored_at, received_at): remember recent ones.
const dateTimeCache = new Map<number, string>();

/** `YYYY-MM-DD hh:mm:ss` in UTC of an epoch-ms instant, clamped to the DateTime range. */
export function dateTimeText(epochMs: number): string {
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

/** toYYYYMM of the clamped DateTime: the partition a row lands in. */
export function partitionMonth(epochMs: number): number {
  const d = new Date(dateTimeSeconds(epochMs) * 1000);
  return d.getUTCFullYear() * 100 + d.getUTCMonth() + 1;
}

const whole = (n: number): string => String(Math.trunc(n));

export function toRow(id: bigint, e: EventRecord, storedAt: number): EventRow {
  const s = wellFormed;
  return {
    id: id.toString(),
    system_user: s(e.systemUser),
    dominio: s(e.dominio),
    nro_serie: s(e.nroSerie),
    codigo: s(e.codigo),
    latitud: e.latitud,
    longitud: e.longitud,
    altitud: e.altitud,
    velocidad: e.velocidad,
    rumbo: e.rumbo,
    valid_position: e.validPosition ? 1 : 0,
    valido: e.valido === null ? null : e.valido ? 1 : 0,
    event_time_text: s(e.eventTimeText),
    event_time: dateTimeText(e.eventTime.epochMs),
    event_time_ms: whole(e.eventTime.epochMs),
    event_time_ticks: e.eventTime.subMsTicks,
    reception_time_text: e.receptionTimeText === null ? null : s(e.receptionTimeText),
    reception_time: e.receptionTime === null ? null : dateTimeText(e.receptionTime.epochMs),
    reception_time_ms: e.receptionTime === null ? null : whole(e.receptionTime.epochMs),
    reception_time_ticks: e.receptionTime === null ? null : e.receptionTime.subMsTicks,
    received_at: dateTimeText(e.receivedAt),
    received_at_ms: whole(e.receivedAt),
    crudo: e.crudo === null ? null : s(e.crudo),
    sensor_keys: e.sensors.map((x) => s(x.clave)),
    sensor_values: e.sensors.map((x) => s(x.valor)),
    operation: s(e.operation),
    dedupe_key: s(e.dedupeKey),
    stored_at: dateTimeText(storedAt),
  };
}

/**
 * The columns `recent()` reads. (U)Int64 columns come back as decimal text with
 * `output_format_json_quote_64bit_integers = 1`. No alias reuses a column name: ClickHouse aliases
 * are visible in WHERE and ORDER BY too.
 */
export const STORED_COLUMNS = [
  'id',
  'system_user',
  'dominio',
  'nro_serie',
  'codigo',
  'latitud',
  'longitud',
  'altitud',
  'velocidad',
  'rumbo',
  'valid_position',
  'valido',
  'event_time_text',
  'event_time_ms',
  'event_time_ticks',
  'reception_time_text',
  'reception_time_ms',
  'reception_time_ticks',
  'received_at_ms',
  'crudo',
  'sensor_keys',
  'sensor_values',
  'operation',
  'dedupe_key',
  'toUInt32(stored_at) AS stored_at_epoch',
] as const;

/** A row as `SELECT ${STORED_COLUMNS}` returns it in JSONEachRow. */
export interface StoredRow {
  id: string;
  system_user: string;
  dominio: string;
  nro_serie: string;
  codigo: string;
  latitud: number;
  longitud: number;
  altitud: number;
  velocidad: number;
  rumbo: number | null;
  valid_position: number;
  valido: number | null;
  event_time_text: string;
  event_time_ms: string;
  event_time_ticks: number;
  reception_time_text: string | null;
  reception_time_ms: string | null;
  reception_time_ticks: number | null;
  received_at_ms: string;
  crudo: string | null;
  sensor_keys: string[];
  sensor_values: string[];
  operation: string;
  dedupe_key: string;
  stored_at_epoch: number;
}

function instant(ms: string, ticks: number | null): EventInstant {
  return { epochMs: Number(ms), subMsTicks: ticks ?? 0 };
}

export function fromRow(row: StoredRow): StoredEvent {
  return {
    id: BigInt(row.id),
    systemUser: row.system_user,
    dominio: row.dominio,
    nroSerie: row.nro_serie,
    codigo: row.codigo,
    latitud: row.latitud,
    longitud: row.longitud,
    altitud: row.altitud,
    velocidad: row.velocidad,
    rumbo: row.rumbo,
    validPosition: row.valid_position !== 0,
    valido: row.valido === null ? null : row.valido !== 0,
    eventTimeText: row.event_time_text,
    eventTime: instant(row.event_time_ms, row.event_time_ticks),
    receptionTimeText: row.reception_time_text,
    receptionTime: row.reception_time_ms === null ? null : instant(row.reception_time_ms, row.reception_time_ticks),
    receivedAt: Number(row.received_at_ms),
    crudo: row.crudo,
    sensors: row.sensor_keys.map((clave, i) => ({ clave, valor: row.sensor_values[i] ?? '' })),
    operation: row.operation,
    dedupeKey: row.dedupe_key,
    storedAt: Number(row.stored_at_epoch) * 1000,
  };
}
