/**
 * Everything `npm run generate` writes, each from the table it derives from: the event topic's
 * schema, the docs' field, operation and setting tables, and the record of what the gateway serves
 * beyond the captured WSDL fixture. test/unit/scripts/generate/targets.unit.test.ts fails while a
 * committed file differs from what is generated here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseCapturedWsdl } from '../../gateway/metadata/captured-wsdl.js';
import { PROTO_FILE } from '../../shared/events/protobuf-fields.js';
import { CATALOGUE_SOURCE, interfaceTable, limitsTable } from './catalogue-docs.js';
import { currentColumnsTable, EVENT_TABLE_SOURCE, eventsSchemaTable, legacyColumnsTable, migrationCopySql } from './event-docs.js';
import { renderProto } from './proto.js';
import { settingsTables, SETTINGS_SOURCE } from './settings-docs.js';
import { withRegion } from './text.js';

export const REPO = path.resolve(import.meta.dirname, '../..');

export interface Target {
  /** The file, relative to the repository root. */
  file: string;
  /** Its whole text as generated, from its current text (a page keeps its prose outside the regions). */
  render: (current: string) => string;
}

/** A page whose regions (id → [source, body]) are generated. */
function page(file: string, regions: (current: string) => [id: string, source: string, body: string][]): Target {
  return { file, render: (current) => regions(current).reduce((text, [id, source, body]) => withRegion(text, id, source, body, file), current) };
}

/** The captured WSDL fixture and the namespace it was captured in (test/helpers/captured-wsdl.ts reads the same). */
export const CAPTURED_WSDL = { file: 'test/fixtures/captured-service.wsdl', namespace: 'http://gps.example.com/prestadores/' } as const;
/** What the gateway serves beyond it, one entry a line. */
export const SERVED_BEYOND_CAPTURE_FILE = 'test/fixtures/captured-service.beyond.txt';

function servedBeyondCapture(): string {
  const bytes = readFileSync(path.join(REPO, CAPTURED_WSDL.file));
  const beyond = parseCapturedWsdl(bytes, CAPTURED_WSDL.namespace, CAPTURED_WSDL.file).beyond;
  const header = [
    `# What the gateway serves beyond ${CAPTURED_WSDL.file}, as its start's log line lists it: the operations`,
    '# and elements gained since the capture. Written by `npm run generate`; review the diff.',
  ];
  return [...header, ...beyond, ''].join('\n');
}

export const TARGETS: readonly Target[] = [
  { file: PROTO_FILE, render: () => renderProto() },
  page('docs/events.md', () => [['event-fields', EVENT_TABLE_SOURCE, eventsSchemaTable()]]),
  page('docs/analytics.md', () => [
    ['event-columns', EVENT_TABLE_SOURCE, currentColumnsTable()],
    ['event-columns-18.16', EVENT_TABLE_SOURCE, legacyColumnsTable()],
    ['copy-to-current', EVENT_TABLE_SOURCE, migrationCopySql()],
  ]),
  page('docs/protocol.md', () => [
    ['operations', CATALOGUE_SOURCE, interfaceTable()],
    ['limits', CATALOGUE_SOURCE, limitsTable()],
  ]),
  page('docs/configuration.md', (current) => [...settingsTables(current)].map(([id, body]): [string, string, string] => [id, SETTINGS_SOURCE, body])),
  { file: SERVED_BEYOND_CAPTURE_FILE, render: () => servedBeyondCapture() },
];

/** The targets whose committed text differs from the generated one, with that text. */
export function outOfDate(read: (file: string) => string = (file) => readFileSync(path.join(REPO, file), 'utf8')): { file: string; generated: string }[] {
  return TARGETS.flatMap((t) => {
    let current = '';
    try {
      current = read(t.file);
    } catch {
      // Not written yet: generated from nothing (a page without its regions then says so).
    }
    const generated = t.render(current);
    return generated === current ? [] : [{ file: t.file, generated }];
  });
}
