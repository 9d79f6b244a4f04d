/**
 * What `npm run generate` writes (scripts/generate/targets.ts) is what is committed: the event
 * topic's schema, the docs' field, operation and setting tables, and what the gateway serves beyond
 * the captured WSDL fixture. A table changed without running the command fails here, naming the
 * file; the regions of a page are the only text the command touches.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { outOfDate, REPO, TARGETS } from '../../../../scripts/generate/targets.js';
import { regionBody, withRegion } from '../../../../scripts/generate/text.js';
import { PROTO_FILE } from '../../../../shared/events/protobuf-fields.js';

const committed = (file: string): string => readFileSync(path.join(REPO, file), 'utf8');

describe('generated files', () => {
  it('every generated file is as committed (else: run `npm run generate` and commit what it wrote)', () => {
    expect(TARGETS.map((t) => t.file)).toEqual(expect.arrayContaining([PROTO_FILE, 'docs/events.md', 'docs/analytics.md', 'docs/protocol.md', 'docs/configuration.md']));
    const stale = outOfDate().map((s) => s.file);
    expect(stale, `out of date: run \`npm run generate\` and commit ${stale.join(', ')}`).toEqual([]);
  });

  it('names a file edited by hand, with the text its table gives', () => {
    const edited = (file: string): string => (file === PROTO_FILE ? committed(file).replace('string dedupe_key = 21;', 'string dedupe_key = 22;') : committed(file));
    const stale = outOfDate(edited);
    expect(stale.map((s) => s.file)).toEqual([PROTO_FILE]);
    expect(stale[0]!.generated).toBe(committed(PROTO_FILE));
  });

  it('rewrites a page only between its markers, and refuses a page that lost them', () => {
    const page = committed('docs/events.md');
    const body = regionBody(page, 'event-fields', 'docs/events.md');
    const rewritten = withRegion(page, 'event-fields', 'shared/events/fields.ts', '| a |\n', 'docs/events.md');
    expect(rewritten.replace('| a |\n', body)).toBe(page);
    const edited = (file: string): string => (file === 'docs/events.md' ? page.replace(/<!-- end generated: event-fields -->/, '') : committed(file));
    expect(() => outOfDate(edited)).toThrow('docs/events.md has no region "event-fields"');
  });
});
