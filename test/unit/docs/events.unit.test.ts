/**
 * docs/events.md is what other teams copy from: its consumers are the very files the scale-out
 * tests run against a real gateway (test/foreign/), its field table lists every field of
 * events.proto under its number, and the content type it tells consumers to check is the one the
 * gateway writes.
 */
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { PROTO_FILE, PROTO_MESSAGE, PROTO_PACKAGE } from '../../../shared/events/protobuf-fields.js';
import { WIRE_HEADERS } from '../../../shared/events/wire.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs/events.md'), 'utf8');
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
});
