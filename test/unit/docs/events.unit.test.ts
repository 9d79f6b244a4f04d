/**
 * docs/events.md is what other teams copy from: its consumers are the very files the scale-out
 * tests run against a real gateway (test/foreign/), its field table lists every field of
 * events.proto under its number and type, and the content type it tells consumers to check is the
 * one the gateway writes. And one story: for every field of EVENT_FIELDS and of Sensor, the text
 * of what it holds when not sent (shared/events/presence.ts, which
 * test/embedded/event-presence.embedded.test.ts holds the gateway to) is in events.proto's comment
 * on it and in its row of the table, word for word, and only a field that may be null says
 * "absent".
 */
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { EVENT_PRESENCE, SENSOR_PRESENCE } from '../../../shared/events/presence.js';
import { EVENT_PROTO_NUMBERS, PROTO_FILE, PROTO_MESSAGE, PROTO_PACKAGE, PROTO_PAIR_MESSAGE } from '../../../shared/events/protobuf-fields.js';
import { EVENT_FIELD_LIST } from '../../../shared/events/schema.js';
import { WIRE_HEADERS } from '../../../shared/events/wire.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs/events.md'), 'utf8');
const PROTO = fs.readFileSync(path.join(ROOT, PROTO_FILE), 'utf8');
const flat = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The table's rows, by each field name in their first cell: [names cell, numbers cell, type cell, meaning cell]. */
function tableRows(doc: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of doc.split('\n').filter((l) => l.startsWith('| `'))) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    for (const m of cells[0]!.matchAll(/`(\w+)`/g)) rows.set(m[1]!, cells);
  }
  return rows;
}

/** Where events.proto, the table and presence.ts disagree on what a field holds when not sent. */
function storyDifferences(proto: string, doc: string): string[] {
  const root = protobuf.parse(proto, { keepCase: true, alternateCommentMode: true }).root;
  const message = root.lookupType(`${PROTO_PACKAGE}.${PROTO_MESSAGE}`);
  const sensor = root.lookupType(`${PROTO_PACKAGE}.${PROTO_PAIR_MESSAGE}`);
  const rows = tableRows(doc);
  const problems: string[] = [];
  for (const f of EVENT_FIELD_LIST) {
    const text = EVENT_PRESENCE[f.name];
    const protoField = message.fieldsArray.find((p) => p.id === EVENT_PROTO_NUMBERS[f.name])!;
    if (!flat(protoField.comment ?? '').includes(text)) problems.push(`events.proto ${protoField.name}: its comment lacks "${text}"`);
    const row = rows.get(protoField.name);
    if (row === undefined) problems.push(`docs/events.md: no row for ${protoField.name}`);
    else {
      if (!flat(row[3]!).includes(text)) problems.push(`docs/events.md ${protoField.name}: its row lacks "${text}"`);
      const type = row[2]!.split(',').map((t) => t.trim())[row[0]!.match(/`\w+`/g)!.indexOf(`\`${protoField.name}\``)] ?? row[2]!;
      const declared = `${protoField.options?.proto3_optional === true ? 'optional ' : ''}${protoField.repeated ? 'repeated ' : ''}${protoField.type}`;
      if (!type.replace(/`/g, '').startsWith(declared)) problems.push(`docs/events.md ${protoField.name}: type "${type}", events.proto says "${declared}"`);
    }
    if (/\babsent\b/i.test(text) !== f.nullable) problems.push(`presence of ${f.name} ${f.nullable ? 'must say when it is absent' : 'says "absent" of a field that is never null'}`);
  }
  for (const [name, text] of Object.entries(SENSOR_PRESENCE)) {
    if (!flat(sensor.fields[name]?.comment ?? '').includes(text)) problems.push(`events.proto Sensor.${name}: its comment lacks "${text}"`);
    if (!flat(rows.get('sensors')?.[3] ?? '').includes(`\`${name}\`: ${text}`)) problems.push(`docs/events.md sensors: its row lacks "${name}: ${text}"`);
  }
  return problems;
}

const block = (lang: string): string[] => [...DOC.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

describe('docs/events.md', () => {
  it('shows the consumers the tests run, unchanged', () => {
    expect(block('python')).toEqual([fs.readFileSync(path.join(ROOT, 'test/foreign/consume_events.py'), 'utf8')]);
    expect(block('ts')).toEqual([fs.readFileSync(path.join(ROOT, 'test/foreign/consume-events.ts'), 'utf8')]);
  });

  it('lists every field of events.proto with its number, and the content type the gateway writes', () => {
    const message = protobuf.parse(fs.readFileSync(path.join(ROOT, PROTO_FILE), 'utf8'), { keepCase: true }).root.lookupType(`${PROTO_PACKAGE}.${PROTO_MESSAGE}`);
    const rows = DOC.split('\n').filter((l) => l.startsWith('| `'));
    for (const f of message.fieldsArray) {
      const row = rows.find((r) => r.split('|')[1]!.includes(`\`${f.name}\``));
      expect(row, f.name).toBeDefined();
      const names = [...row!.split('|')[1]!.matchAll(/`(\w+)`/g)].map((m) => m[1]);
      const numbers = row!.split('|')[2]!.split(',').map((n) => Number(n.trim()));
      expect(numbers[names.indexOf(f.name)], f.name).toBe(f.id);
    }
    expect(DOC).toContain(WIRE_HEADERS[3]['content-type']);
    for (const example of [...block('python'), ...block('ts')]) expect(example).toContain(WIRE_HEADERS[3]['content-type']);
  });

  it('tells the story events.proto tells: for every field, what it holds when not sent, word for word, and its type', () => {
    expect(storyDifferences(PROTO, DOC)).toEqual([]);
  });

  it('notices a comment or a row that says otherwise, and "absent" on a field that is never null', () => {
    const oldRumbo = 'Heading, as sent; absent when the provider did not send one.';
    const proto = PROTO.replace(/ {2}\/\/ Heading, as sent[\s\S]*?(?= {2}optional double rumbo)/, `  // ${oldRumbo}\n`);
    expect(storyDifferences(proto, DOC)).toEqual([`events.proto rumbo: its comment lacks "${EVENT_PRESENCE.rumbo}"`]);
    const doc = DOC.replace(EVENT_PRESENCE.crudo, 'absent when not sent').replace(SENSOR_PRESENCE.clave, 'the key');
    expect(storyDifferences(PROTO, doc)).toEqual([`docs/events.md crudo: its row lacks "${EVENT_PRESENCE.crudo}"`, `docs/events.md sensors: its row lacks "clave: ${SENSOR_PRESENCE.clave}"`]);
    const retyped = DOC.replace('| 10 | optional double |', '| 10 | double |');
    expect(storyDifferences(PROTO, retyped)).toEqual(['docs/events.md rumbo: type "double", events.proto says "optional double"']);
  });
});
