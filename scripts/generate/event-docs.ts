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
