/**
 * The field tables of docs/events.md (the topic's schema) and docs/analytics.md (the columns of
 * both ClickHouse schemas), written from the event table (shared/events/fields.ts) and the
 * columns each store derives from it.
 */
import { currentEventColumns } from '../../shared/backends/clickhouse/current-rows.js';
import { eventColumns as legacyEventColumns, type ClickHouseColumn } from '../../shared/backends/clickhouse/rows.js';
import { EVENT_FIELDS, type EventField } from '../../shared/events/schema.js';
import { PROTO_ID_NUMBER, PROTO_PAIR_FIELDS, PROTO_PAIR_MESSAGE, protoField } from '../../shared/events/protobuf-fields.js';
import { fieldComment, publishedFields, type PublishedTable } from './proto.js';
import { markdownTable } from './text.js';

export const EVENT_TABLE_SOURCE = 'shared/events/fields.ts';

const code = (name: string): string => `\`${name}\``;

/** docs/events.md §The schema: every field of the message, by number. */
export function eventsSchemaTable(table: PublishedTable = EVENT_FIELDS): string {
  const byNumber = publishedFields(table).sort((a, b) => a.spec.proto - b.spec.proto);
  const rows = [
    [code('id'), String(PROTO_ID_NUMBER), 'fixed64', "The event's id, unique in the deployment and never 0 (see Delivery guarantees and duplicates). Always set."],
    ...byNumber.map(({ field: f, spec }) => {
      const p = protoField(f, spec.proto);
      const type = `${p.optional ? 'optional ' : ''}${p.repeated ? 'repeated ' : ''}${p.type === PROTO_PAIR_MESSAGE ? `${code(p.type)} (${PROTO_PAIR_FIELDS.map((s) => `${code(s.name)} ${s.number}`).join(', ')})` : p.type}`;
      const pairs = f.kind === 'pairs' ? PROTO_PAIR_FIELDS.map((s) => ` ${code(s.name)}: ${s.absent}`).join('') : '';
      return [code(p.name), String(p.number), type, fieldComment(f, spec) + pairs];
    }),
  ];
  return markdownTable(['field', 'number', 'type', 'meaning, and what it holds when not sent'], rows);
}

/** A column's type without its codec: what an analyst reads in `DESCRIBE`'s type column. */
const typeOf = (c: ClickHouseColumn): string => c.type.replace(/ CODEC\(.*\)$/, '');

/** One row per field: its column names, their types (once when all alike), and `meaning`. */
function columnRow(columns: readonly ClickHouseColumn[], meaning: string): string[] {
  const types = [...new Set(columns.map(typeOf))];
  return [columns.map((c) => code(c.name)).join(', '), types.join(', '), meaning];
}

/** The columns of `events` that are not fields (the stores' own), first and last. */
const OWN_COLUMNS = { id: 'the event\'s id (see "Ids" below)', stored_at: 'when the worker inserted the row' } as const;

/** docs/analytics.md §`events` columns: the current schema (ClickHouse 24.8+). */
export function currentColumnsTable(table: PublishedTable = EVENT_FIELDS): string {
  const fields = publishedFields(table);
  const all = currentEventColumns(fields.map((f) => f.field));
  const own = (name: keyof typeof OWN_COLUMNS): string[] => columnRow(all.filter((c) => c.name === name), OWN_COLUMNS[name]);
  const rows = [own('id'), ...fields.map(({ field, spec }) => columnRow(currentEventColumns([field]).slice(1, -1), spec.doc)), own('stored_at')];
  return markdownTable(['column', 'type', 'meaning'], rows);
}

/** What an 18.16 column of a field holds where the current schema's differs, by the field's kind. */
function legacyMeaning(f: EventField, columns: readonly ClickHouseColumn[]): string {
  const c = f.clickhouseColumn;
  switch (f.kind) {
    case 'instant':
    case 'epochMs': {
      const parts = [
        `${code(c)} in whole seconds, **clamped** to 1970-01-01 00:00:00 .. 2105-12-31 23:59:59`,
        `${code(`${c}_ms`)} the same instant in epoch milliseconds, exact (negative before 1970)`,
      ];
      if (f.kind === 'instant') parts.push(`${code(`${c}_ticks`)} the 100 ns ticks below the millisecond (0..9999): with ${code(`${c}_ms`)}, the full .NET precision`);
      return parts.join('; ');
    }
    case 'bool':
      return '1/0';
    case 'text':
      if (f.hash64) return 'the text itself (the current schema keeps a 64-bit hash of it)';
      return 'as in the current schema, without LowCardinality';
    case 'pairs':
      return 'the same two arrays, without LowCardinality';
    default:
      return `as in the current schema (${columns.map(typeOf).join(', ')})`;
  }
}

/** docs/analytics.md §The 18.16 schema: the columns of `events` that differ from the current schema's. */
export function legacyColumnsTable(table: PublishedTable = EVENT_FIELDS): string {
  const rows: string[][] = [];
  for (const { field: f } of publishedFields(table)) {
    const current = new Map(currentEventColumns([f]).slice(1, -1).map((c) => [c.name, typeOf(c)]));
    const legacy = legacyEventColumns([f]).slice(1, -1);
    if (legacy.every((c) => current.get(c.name) === c.type) && legacy.length === current.size) continue;
    rows.push(columnRow(legacy, legacyMeaning(f, legacy)));
  }
  return markdownTable(['column', 'type', 'meaning'], rows);
}

// ---- the copy from an 18.16 database into the current schema ----------------------------------------

const DT7 = "'DateTime64(7, \\'UTC\\')'";

/** The expressions reading field `f` of an 18.16 row as the current schema's columns, in order. */
function copyExpressions(f: EventField): string[] {
  const c = f.clickhouseColumn;
  const orNull = (test: string, value: string): string => (f.nullable ? `if(isNull(${test}), NULL, ${value})` : value);
  const notNull = (column: string): string => (f.nullable ? `assumeNotNull(${column})` : column);
  switch (f.kind) {
    case 'text':
      return [f.hash64 ? `reinterpretAsUInt64(reverse(substring(SHA256(${c}), 1, 8)))` : c];
    case 'real':
    case 'int':
      return [c];
    case 'bool':
      return [orNull(c, `${c} = 1`)];
    case 'instant':
      return [orNull(`${c}_ms`, `reinterpret(${notNull(`${c}_ms`)} * 10000 + ${notNull(`${c}_ticks`)}, ${DT7})`)];
    case 'epochMs':
      return [orNull(`${c}_ms`, `fromUnixTimestamp64Milli(${notNull(`${c}_ms`)}, 'UTC')`)];
    case 'pairs':
      return [`${c}_keys`, `${c}_values`];
  }
}

/** `prefix` and `items` joined with ", " in lines of at most `width`, each after the first indented by `indent`. */
function packed(prefix: string, items: readonly string[], width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const [i, item] of items.entries()) {
    const piece = `${item}${i < items.length - 1 ? ',' : ''}`;
    const before = lines.length === 0 ? prefix.length : indent.length;
    if (line !== '' && before + line.length + 1 + piece.length > width) {
      lines.push(line);
      line = piece;
    } else line = line === '' ? piece : `${line} ${piece}`;
  }
  if (line !== '') lines.push(line);
  return prefix + lines.join(`\n${indent}`);
}

/**
 * docs/analytics.md §Moving an 18.16 database to the current schema: the statement copying every
 * row of an 18.16-shaped `old.events` into the current schema's `gateway.events`, each field
 * converted by its kind (test/embedded/clickhouse-current.embedded.test.ts runs it).
 */
export function migrationCopySql(table: PublishedTable = EVENT_FIELDS): string {
  const fields = publishedFields(table).map((f) => f.field);
  const columns = currentEventColumns(fields).map((c) => c.name);
  const expressions = ['id', ...fields.flatMap(copyExpressions), 'stored_at'];
  const indent = '       ';
  return [
    '```sql migration',
    `${packed('INSERT INTO gateway.events (', columns, 99, indent)})`,
    packed('SELECT ', expressions, 100, indent),
    'FROM old.events FINAL',
    '```',
  ].join('\n');
}
