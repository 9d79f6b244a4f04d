/**
 * The shipped schema (proto/prestadores/events/v1/events.proto) says exactly what wire version 3
 * writes: every field of EVENT_FIELDS under its `proto` number, with the name and type derived
 * from its kind, `optional` where it may be null, nothing else but the id; each field and message
 * documented; no number reused from `reserved` (the parser refuses that). The file is generated
 * from the table (`npm run generate`); this reads it back with protobufjs' parser, a reader we did
 * not write, so a generator that wrote it wrong fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { EVENT_FIELD_LIST, type EventField } from '../../../../shared/events/schema.js';
import {
  EVENT_PROTO_NUMBERS,
  PROTO_FILE,
  PROTO_ID_NUMBER,
  PROTO_MESSAGE,
  PROTO_PACKAGE,
  PROTO_PAIR_MESSAGE,
  protoField,
  type ProtoField,
} from '../../../../shared/events/protobuf-fields.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const PROTO_TEXT = fs.readFileSync(path.join(ROOT, PROTO_FILE), 'utf8');

/** What a .proto text declares, as protobufjs parses it, and how it differs from the field table. */
function schemaDifferences(text: string, fields: readonly EventField[], numbers: Readonly<Record<string, number>>): string[] {
  const parsed = protobuf.parse(text, { keepCase: true, alternateCommentMode: true });
  const problems: string[] = [];
  if (!/^syntax = "proto3";$/m.test(text)) problems.push('not proto3');
  if (parsed.package !== PROTO_PACKAGE) problems.push(`package ${String(parsed.package)}`);
  const message = parsed.root.lookupType(`${PROTO_PACKAGE}.${PROTO_MESSAGE}`);
  const declared = new Map(message.fieldsArray.map((f): [string, ProtoField] => [
    f.name,
    { name: f.name, number: f.id, type: f.type, optional: f.options?.proto3_optional === true, repeated: f.repeated },
  ]));
  const expected: ProtoField[] = [
    { name: 'id', number: PROTO_ID_NUMBER, type: 'fixed64', optional: false, repeated: false },
    ...fields.map((f) => protoField(f, numbers[f.name]!)),
  ];
  for (const want of expected) {
    const got = declared.get(want.name);
    if (got === undefined) problems.push(`no field ${want.name} = ${want.number}`);
    else if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`${want.name}: declared ${JSON.stringify(got)}, the table makes ${JSON.stringify(want)}`);
    declared.delete(want.name);
  }
  for (const extra of declared.keys()) problems.push(`field ${extra} is not in EVENT_FIELDS`);
  for (const f of message.fieldsArray) if (!f.comment) problems.push(`field ${f.name} has no comment`);
  const pair = parsed.root.lookupType(`${PROTO_PACKAGE}.${PROTO_PAIR_MESSAGE}`);
  const pairFields = pair.fieldsArray.map((f) => `${f.type} ${f.name} = ${f.id}${f.repeated || f.options?.proto3_optional === true ? '?' : ''}`);
  if (JSON.stringify(pairFields) !== JSON.stringify(['string clave = 1', 'string valor = 2'])) problems.push(`${PROTO_PAIR_MESSAGE} declares ${pairFields.join(', ')}`);
  if (!message.comment || !pair.comment) problems.push('a message has no comment');
  return problems;
}

describe('events.proto against EVENT_FIELDS', () => {
  it('declares every field of the table under its number, name, type and presence, and nothing else', () => {
    expect(schemaDifferences(PROTO_TEXT, EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS)).toEqual([]);
  });

  it('gives every field its own number, none of them the id’s, all below 2^29', () => {
    const numbers = Object.values(EVENT_PROTO_NUMBERS);
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(numbers).not.toContain(PROTO_ID_NUMBER);
    for (const n of numbers) expect(n > 0 && n < 2 ** 29 && !(n >= 19000 && n <= 19999)).toBe(true);
  });

  it('notices a field the table has and the schema lacks, a retyped one, a renamed one and one made optional', () => {
    const lacking = PROTO_TEXT.replace(/^\s*optional string crudo = 18;\n/m, '');
    expect(schemaDifferences(lacking, EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS)).toEqual(['no field crudo = 18']);
    const retyped = PROTO_TEXT.replace('double altitud = 8;', 'float altitud = 8;');
    expect(schemaDifferences(retyped, EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS)[0]).toMatch(/^altitud: declared .*"float"/);
    const renamed = PROTO_TEXT.replace('string dedupe_key = 21;', 'string dedupe = 21;');
    expect(schemaDifferences(renamed, EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS)).toEqual(['no field dedupe_key = 21', 'field dedupe is not in EVENT_FIELDS']);
    const optional = PROTO_TEXT.replace('string codigo = 5;', 'optional string codigo = 5;');
    expect(schemaDifferences(optional, EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS)[0]).toMatch(/^codigo: declared .*"optional":true/);
  });

  it('notices a field added to the table without a schema field, and a number taken from `reserved`', () => {
    // A made-up name, so that no real field added later ever collides with it.
    const added: EventField = { ...EVENT_FIELD_LIST[0]!, name: 'notAFieldYet' as EventField['name'], kind: 'int', column: 'not_a_field_yet', nullable: false };
    expect(schemaDifferences(PROTO_TEXT, [...EVENT_FIELD_LIST, added], { ...EVENT_PROTO_NUMBERS, notAFieldYet: 99 })).toEqual(['no field not_a_field_yet = 99']);
    const reusing = PROTO_TEXT.replace('message VehicleEvent {', 'message VehicleEvent {\n  reserved 21;');
    // protobufjs' parser refuses it outright, as protoc does.
    expect(() => schemaDifferences(reusing, EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS)).toThrow(/id 21 is reserved/);
  });

  it('documents every field (its comment is what other teams read)', () => {
    const undocumented = PROTO_TEXT.replace(/^ *\/\/ Heading, as sent[^]*?(?=^ *optional double rumbo)/m, '');
    expect(schemaDifferences(undocumented, EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS)).toEqual(['field rumbo has no comment']);
  });
});
