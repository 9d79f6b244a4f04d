/**
 * The error registry (gateway/errors/registry.ts) is the one home of what a client can see go
 * wrong: docs/protocol.md lists exactly its entries, every entry is used and documented, and no
 * production file spells one of its texts out on its own. What the texts are on the wire is proven
 * by the golden and fidelity tests and the wire fixtures, which hold ASMX's bytes written out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_ERRORS, ClientError, clientText, type ClientErrorDef, type ClientErrorKey } from '../../../../gateway/errors/registry.js';
import { REPO } from '../../../helpers/paths.js';

const ROOT = REPO;
const PROTOCOL = readFileSync(join(ROOT, 'docs/protocol.md'), 'utf8');
const ENTRIES = Object.entries(CLIENT_ERRORS) as [ClientErrorKey, ClientErrorDef][];
const REGISTRY_FILE = join('gateway', 'errors', 'registry.ts');

function section(doc: string, heading: string): string {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/protocol.md has no "${heading}".`);
  const next = doc.indexOf('\n## ', start + heading.length + 2);
  return doc.slice(start, next < 0 ? undefined : next);
}

/** A registry entry as docs/protocol.md §Errors lists it. */
function docRow([key, def]: [ClientErrorKey, ClientErrorDef]): string {
  const text = def.text === '' ? '(empty body)' : `\`${def.text.replace(/\r\n/g, '\\r\\n')}\``;
  return `| \`${key}\` | ${def.status} | ${def.fault ?? '—'} | ${text} | §${def.docs}${def.differs === undefined ? '' : ' (differs from ASMX)'} |`;
}

function productionSources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return productionSources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Files allowed to hold text that looks like a registry text: the admin API answers operators,
 * not provider clients, in its own words; dotnet-convert.ts holds .NET's own exception messages,
 * which fill `cannotConvert`'s {reason}.
 */
const NOT_CLIENT_TEXT = [join('gateway', 'admin'), join('shared', 'dotnet', 'dotnet-convert.ts')];
const SOURCES = ['gateway', 'shared', 'worker', 'cli']
  .flatMap(productionSources)
  .filter((f) => f !== REGISTRY_FILE && !NOT_CLIENT_TEXT.some((allowed) => f.startsWith(allowed)));
const SOURCE_TEXT = new Map(SOURCES.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));

describe('error registry', () => {
  it('docs/protocol.md §Errors lists every entry, in order, as the registry declares it', () => {
    const errors = section(PROTOCOL, '## Errors');
    const table = errors.slice(errors.indexOf('| key | HTTP | SOAP fault | text | see |'));
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    expect(rows).toEqual(ENTRIES.map(docRow));
  });

  it('every entry names a section of docs/protocol.md, and each difference from ASMX has its row there', () => {
    const differences = section(PROTOCOL, '## Differences from ASMX');
    for (const [key, def] of ENTRIES) {
      expect(PROTOCOL, `${key}: §${def.docs}`).toContain(`\n## ${def.docs}\n`);
      if (def.differs !== undefined) expect(differences, `${key}: differs`).toContain(`\n| ${def.differs}`);
    }
  });

  it('every entry is answered somewhere: production code names its key', () => {
    const all = [...SOURCE_TEXT.values()].join('\n');
    const unused = ENTRIES.map(([key]) => key).filter((key) => !new RegExp(`['.]${key}\\b`).test(all));
    expect(unused).toEqual([]);
  });

  it('no production file spells out a registry text of its own', () => {
    const copies: string[] = [];
    for (const [key, def] of ENTRIES) {
      // The fixed runs of the text long enough to be unmistakable.
      const fragments = def.text.split(/\{\w+\}|\r\n/).map((f) => f.trim()).filter((f) => f.length >= 16);
      for (const [file, source] of SOURCE_TEXT) {
        for (const fragment of fragments) if (source.includes(fragment)) copies.push(`${file}: ${key} "${fragment}"`);
      }
    }
    expect(copies).toEqual([]);
  });

  it('fills placeholders and carries the entry with the error', () => {
    expect(clientText('soapActionNotRecognized', { action: 'urn:x' })).toBe('Server did not recognize the value of HTTP Header SOAPAction: urn:x.');
    expect(clientText('bodyTooLarge', { limit: 1024 })).toBe('Request body exceeds the limit of 1024 bytes.');
    const err = ClientError.of('noSession');
    expect([err.key, err.status, err.fault, err.message]).toEqual(['noSession', 500, 'Client', CLIENT_ERRORS.noSession.text]);
  });

  it('a text holds only placeholders the code can fill (letters in braces, nothing else)', () => {
    for (const [key, def] of ENTRIES) {
      expect(def.text.replace(/\{\w+\}/g, ''), key).not.toMatch(/[{}]/);
    }
  });
});
