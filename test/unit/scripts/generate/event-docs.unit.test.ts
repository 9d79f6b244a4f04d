/**
 * A field added to the event table reaches every generated text by itself: events.proto (read back
 * by protobufjs), the topic's field table, both ClickHouse column tables and the copy from an
 * 18.16 database (which test/embedded/clickhouse-current.embedded.test.ts runs on the shipped table).
 */
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { currentColumnsTable, eventsSchemaTable, legacyColumnsTable, migrationCopySql } from '../../../../scripts/generate/event-docs.js';
import { renderProto } from '../../../../scripts/generate/proto.js';
import { PROTO_MESSAGE, PROTO_PACKAGE } from '../../../../shared/events/protobuf-fields.js';
import { EVENT_FIELDS, type ShippedFieldSpec } from '../../../../shared/events/schema.js';

/** A number above every field's, so that the made-up field never takes a real one's. */
const NEXT = Math.max(...Object.values(EVENT_FIELDS).map((f) => f.proto)) + 1;

const WITH_FIELD = {
  ...EVENT_FIELDS,
  lastFix: {
    kind: 'instant', nullable: true, column: 'last_fix', since: 99, example: null, proto: NEXT,
    doc: 'When the device last had a fix.',
    absent: 'Absent when the device did not say.',
  },
} as const satisfies Record<string, ShippedFieldSpec>;

describe('a field added to the table', () => {
  it('is declared in events.proto under its number, its name with its unit, optional, and documented', () => {
    const root = protobuf.parse(renderProto(WITH_FIELD), { keepCase: true, alternateCommentMode: true }).root;
    const field = root.lookupType(`${PROTO_PACKAGE}.${PROTO_MESSAGE}`).fields['last_fix_unix_100ns'];
    expect(field).toMatchObject({ id: NEXT, type: 'sfixed64' });
    expect(field?.options?.proto3_optional).toBe(true);
    expect(field?.comment?.replace(/\s+/g, ' ')).toBe('When the device last had a fix. In 100 ns units since 1970-01-01T00:00:00Z (UTC). Absent when the device did not say.');
    // The shipped table renders as it did: the field changes nothing else.
    expect(renderProto(WITH_FIELD).replace(/\n {2}\/\/ When the device[^]*?last_fix_unix_100ns = \d+;/, '')).toBe(renderProto());
  });

  it('gets its row in docs/events.md and in both ClickHouse column tables', () => {
    expect(eventsSchemaTable(WITH_FIELD).split('\n').at(-1)).toBe(
      `| \`last_fix_unix_100ns\` | ${NEXT} | optional sfixed64 | When the device last had a fix. In 100 ns units since 1970-01-01T00:00:00Z (UTC). Absent when the device did not say. |`,
    );
    expect(currentColumnsTable(WITH_FIELD).split('\n').at(-2)).toBe("| `last_fix` | Nullable(DateTime64(7, 'UTC')) | When the device last had a fix. |");
    expect(legacyColumnsTable(WITH_FIELD).split('\n').at(-1)).toMatch(
      /^\| `last_fix`, `last_fix_ms`, `last_fix_ticks` \| Nullable\(DateTime\('UTC'\)\), Nullable\(Int64\), Nullable\(UInt16\) \| `last_fix` in whole seconds, \*\*clamped\*\*/,
    );
  });

  it('a field the 18.16 schema stores as the current one does has no row among the differences', () => {
    const same = { ...EVENT_FIELDS, count: { kind: 'int', nullable: false, column: 'count', since: 99, example: 0, proto: NEXT, doc: 'A count.', absent: 'Always set.' } } as const satisfies Record<string, ShippedFieldSpec>;
    expect(legacyColumnsTable(same)).toBe(legacyColumnsTable());
    expect(currentColumnsTable(same)).toContain('| `count` | Int64 | A count. |');
  });

  it('is copied from an 18.16 database by its kind: a nullable instant from its milliseconds and ticks', () => {
    const sql = migrationCopySql(WITH_FIELD).replace(/\n\s*/g, ' ');
    // The made-up field comes last, after the shipped table's last column.
    const lastShipped = Object.values(EVENT_FIELDS).at(-1)!;
    expect(sql).toContain(`, ${lastShipped.column}, last_fix, stored_at) SELECT `);
    expect(sql).toContain(
      ", if(isNull(last_fix_ms), NULL, reinterpret(assumeNotNull(last_fix_ms) * 10000 + assumeNotNull(last_fix_ticks), 'DateTime64(7, \\'UTC\\')')), stored_at FROM old.events FINAL",
    );
  });
});
