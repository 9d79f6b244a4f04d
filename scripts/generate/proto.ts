/**
 * proto/prestadores/events/v1/events.proto, the event topic's public schema, written from the
 * event table (shared/events/fields.ts): each field's declaration from its kind, column and
 * `proto` number (protobuf-fields.ts), its comment from its `doc`, the unit of a time, and its
 * `absent` text.
 */
import { EVENT_FIELDS, resolveFields, type EventField, type FieldKind, type ShippedFieldSpec } from '../../shared/events/schema.js';
import {
  PROTO_ID_NUMBER,
  PROTO_MESSAGE,
  PROTO_PACKAGE,
  PROTO_PAIR_FIELDS,
  PROTO_PAIR_MESSAGE,
  PROTO_RESERVED,
  protoField,
  type ProtoField,
} from '../../shared/events/protobuf-fields.js';
import { wrap } from './text.js';

const WIDTH = 100;

/** What a time field's number counts, said after its `doc` (the name carries the unit too). */
export const TIME_UNIT: Partial<Record<FieldKind, string>> = {
  instant: 'In 100 ns units since 1970-01-01T00:00:00Z (UTC).',
  epochMs: 'In milliseconds since 1970-01-01T00:00:00Z (UTC).',
};

/** The id's row: not a field of the table (the stores' own column), the message's first field. */
export const ID_DOC =
  "The event's id, unique in the deployment and never 0. A provider that resends an event (same provider, Dominio, NroSerie, Codigo, event time and position) " +
  'within the dedupe window gets this same id, and the topic may then carry the event more than once under it: deduplicate by id (docs/events.md).';

/** A field table as the generators read it: the shipped one, or a test's. */
export type PublishedTable = Readonly<Record<string, ShippedFieldSpec>>;

/** The table's fields in table order, each with its entry. */
export function publishedFields(table: PublishedTable): { field: EventField; spec: ShippedFieldSpec }[] {
  return resolveFields(table).map((field) => ({ field, spec: table[field.name]! }));
}

/** A field's whole comment: what it holds, a time's unit, what it holds when not sent. */
export function fieldComment(field: EventField, spec: ShippedFieldSpec): string {
  return [spec.doc, TIME_UNIT[field.kind], spec.absent].filter((s) => s !== undefined).join(' ');
}

/** A declaration as events.proto writes it: `optional double rumbo = 10;`. */
export function declaration(p: ProtoField): string {
  return `${p.optional ? 'optional ' : ''}${p.repeated ? 'repeated ' : ''}${p.type} ${p.name} = ${p.number};`;
}

const comment = (text: string, indent: string): string[] => wrap(text, WIDTH - indent.length - 3).map((l) => `${indent}// ${l}`);

const HEADER = `// The event topic's message (Kafka, wire version 3): one vehicle event the gateway accepted.
//
// This file is a public contract: other teams generate readers from it (docs/events.md). It is
// generated from the gateway's event table (shared/events/fields.ts) by \`npm run generate\`; a
// test fails when it differs. Rules (test/unit/shared/events/protobuf-schema.unit.test.ts):
//   - a field number is never reused or retyped; a field removed from the message has its number
//     and name listed under \`reserved\`;
//   - new fields get new numbers and read as their zero (or absent, if \`optional\`) in messages
//     written before they existed;
//   - anything an existing reader would misread is a new package (prestadores.events.v2) and a new
//     wire version, announced in the record's content-type header.
//
// Times are integers with their unit and epoch in the name, all in UTC: \`_unix_100ns\` is
// 100-nanosecond units since 1970-01-01T00:00:00Z (.NET's DateTime resolution, the precision
// providers send; negative before 1970), \`_unix_ms\` milliseconds since the same instant.
//
// \`optional\` marks a field that may be absent (null), as distinct from its zero value: a
// consumer tells them apart with has_<field>() / HasField / \`field !== undefined\`.
syntax = "proto3";

package ${PROTO_PACKAGE};
`;

/** The whole of events.proto. */
export function renderProto(table: PublishedTable = EVENT_FIELDS): string {
  const out = [HEADER];
  out.push(
    ...comment(
      'One event, as accepted from a provider (prestador) and answered with `id`. Each field\'s comment ends with what it holds when the provider did not send it (docs/events.md says the same).',
      '',
    ),
  );
  out.push(`message ${PROTO_MESSAGE} {`);
  out.push(...comment(ID_DOC, '  '), `  fixed64 id = ${PROTO_ID_NUMBER};`);
  const byNumber = publishedFields(table).sort((a, b) => a.spec.proto - b.spec.proto);
  for (const { field, spec } of byNumber) out.push(...comment(fieldComment(field, spec), '  '), `  ${declaration(protoField(field, spec.proto))}`);
  for (const r of PROTO_RESERVED) out.push(`  reserved ${r.number};`, `  reserved "${r.name}";`);
  out.push('}', '');
  out.push(
    ...comment(
      `One reading of Sensores (a pSensor): a key and its value, both text as sent. The gateway keeps every pSensor of a request, in order, including those whose Clave is empty or missing.`,
      '',
    ),
  );
  out.push(`message ${PROTO_PAIR_MESSAGE} {`);
  for (const p of PROTO_PAIR_FIELDS) out.push(...comment(`${p.doc} ${p.absent}`, '  '), `  string ${p.name} = ${p.number};`);
  out.push('}', '');
  return out.join('\n');
}
