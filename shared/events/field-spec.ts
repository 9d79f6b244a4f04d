import type { EventInstant } from './instant.js';

/**
 * The vocabulary of the event table (fields.ts): what an entry of EVENT_FIELDS may say. The
 * machinery that derives every representation from the table is schema.ts.
 */

/** A sensor reading: Clave and Valor of a pSensor. */
export interface KeyValue {
  clave: string;
  valor: string;
}

/** What a field holds; each kind has one representation per store, the wire and the admin view. */
export interface KindValue {
  /** SQLite TEXT, ClickHouse String, JSON string. */
  text: string;
  /** A finite double: SQLite REAL, ClickHouse Float64. */
  real: number;
  /** A safe integer: SQLite INTEGER, ClickHouse Int64. */
  int: number;
  /** SQLite INTEGER and ClickHouse UInt8, 0 or 1. */
  bool: boolean;
  /** Whole epoch milliseconds: SQLite INTEGER; ClickHouse `col` DateTime (clamped) + `col_ms` Int64. */
  epochMs: number;
  /** .NET-precision instant: SQLite `col_ms` + `col_ticks`; ClickHouse `col` DateTime (clamped) + `col_ms` + `col_ticks`. */
  instant: EventInstant;
  /** Key/value list: SQLite JSON text; ClickHouse `col_keys` + `col_values` parallel Array(String). */
  pairs: KeyValue[];
}

export type FieldKind = keyof KindValue;

/** A value as written in the table (`as const` makes examples readonly). */
type ExampleValue<K extends FieldKind> = K extends 'pairs' ? readonly Readonly<KeyValue>[] : K extends 'instant' ? Readonly<EventInstant> : KindValue[K];

interface FieldSpecOf<K extends FieldKind> {
  kind: K;
  /** Null allowed (a nullable column in every store). A `pairs` field cannot be: ClickHouse has no Nullable(Array). */
  nullable: K extends 'pairs' ? false : boolean;
  /** Column in both stores, or the stem of the kind's columns (`event_time` → `event_time_ms`, ...). */
  column: string;
  /** ClickHouse column (stem) when it differs from `column`. */
  clickhouseColumn?: string;
  /**
   * Few distinct values (providers, codes, operations: hundreds at most): the current ClickHouse
   * schema stores it as LowCardinality (a dictionary per part), 18.16 as a plain column.
   */
  lowCardinality?: K extends 'text' ? true : never;
  /**
   * Only ever compared for equality, never read back: the current ClickHouse schema keeps a 64-bit
   * hash of it (UInt64), 18.16 the text (see current-rows.ts for the collision odds).
   */
  hash64?: K extends 'text' ? true : never;
  /** Key in the Kafka message when it differs from the field's name. */
  wire?: string;
  /** Longest text accepted from clients (the catalogue's limit; informative, stores do not cut). */
  maxLength?: number;
  /** Items accepted from clients at most (`pairs`). */
  maxItems?: number;
  /** Left out of the admin view. */
  hidden?: true;
  /**
   * The schema version that added the field, for a field added after the first release (version
   * 1, the default). Its columns are added by migrations derived from it (shared/events/migrations.ts):
   * version `since` of SQLite and of ClickHouse 18.16, 100 + `since` of the current ClickHouse
   * schema. Whatever was written before it existed reads as its zero (null when nullable; else
   * false, 0, '', [] or the epoch): a Kafka message from an older gateway decodes with it, an older
   * worker's ClickHouse insert leaves the column at its type's default, which is that zero, and the
   * migrations give old rows the same. Never change it once shipped.
   */
  since?: number;
  /** The value test factories give it. */
  example: ExampleValue<K> | null;
}

/** One entry of a field table (EVENT_FIELDS, or a test's). */
export type FieldSpec = { [K in FieldKind]: FieldSpecOf<K> }[FieldKind];

/**
 * What an entry of the shipped table also says, for the public schema and the docs generated from
 * it (`npm run generate`: proto/prestadores/events/v1/events.proto, docs/events.md,
 * docs/analytics.md).
 */
export interface PublishedField {
  /** Its number in the protobuf message (wire version 3). Never change or reuse one. */
  proto: number;
  /** What it holds, for the teams reading the topic and the analysts: one or two sentences. */
  doc: string;
  /**
   * What it holds when the provider did not send it, word for word the end of its comment in
   * events.proto and of its row in docs/events.md; the gateway does it
   * (test/embedded/event-presence.embedded.test.ts). Only a field that may be null says when it is
   * "absent" (test/unit/shared/events/schema.unit.test.ts).
   */
  absent: string;
}

export type ShippedFieldSpec = FieldSpec & PublishedField;
