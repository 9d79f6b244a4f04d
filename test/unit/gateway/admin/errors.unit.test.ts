/**
 * The admin API's error registry (gateway/admin/errors.ts) is the one home of what an operator can
 * see go wrong: docs/admin-api.md §Errors lists exactly its entries, every entry is answered
 * somewhere, and no other file spells one of its texts out or builds an error of its own. What the
 * answers are on the wire is proven by the admin-* embedded tests, which assert the bodies.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_ERRORS, AdminError, invalid, type AdminErrorKey } from '../../../../gateway/admin/errors.js';
import { REPO } from '../../../helpers/paths.js';

interface Entry {
  readonly status: number;
  readonly text: string;
  readonly field?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Readonly<Record<string, string>>;
}

const ENTRIES = Object.entries(ADMIN_ERRORS) as [AdminErrorKey, Entry][];
const DOC = readFileSync(join(REPO, 'docs', 'admin-api.md'), 'utf8');
const REGISTRY_FILE = join('gateway', 'admin', 'errors.ts');

function section(doc: string, heading: string): string {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/admin-api.md has no "${heading}".`);
  const next = doc.indexOf('\n## ', start + heading.length + 2);
  return doc.slice(start, next < 0 ? undefined : next);
}

/** An entry as docs/admin-api.md §Errors lists it. */
function docRow([key, def]: [AdminErrorKey, Entry]): string {
  const more = [
    ...Object.entries(def.body ?? {}).map(([name, value]) => `\`"${name}": "${value}"\``),
    ...(def.field === undefined ? [] : [`\`"field": "${def.field}"\``]),
    ...Object.entries(def.headers ?? {}).map(([name, value]) => `\`${name}: ${value}\``),
  ];
  return `| \`${key}\` | ${def.status} | \`${def.text}\` | ${more.length === 0 ? '—' : more.join(', ')} |`;
}

function sources(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Files allowed to hold a text like one of the table's: the providers' own registry (its 413 reads
 * alike), and the worker's probe server, which answers its 404 and 405 as the admin server does
 * but lives in shared/, below gateway/, so it cannot take them from here.
 */
const OWN_WORDS = [join('gateway', 'errors', 'registry.ts'), join('shared', 'runtime', 'probes.ts')];
const SOURCE_TEXT = new Map(
  ['gateway', 'shared', 'cli']
    .flatMap(sources)
    .filter((f) => f !== REGISTRY_FILE && !OWN_WORDS.includes(f))
    .map((f) => [f, readFileSync(join(REPO, f), 'utf8')]),
);

describe('admin error registry', () => {
  it('docs/admin-api.md §Errors lists every entry, in order, as the registry declares it', () => {
    const errors = section(DOC, '## Errors');
    const table = errors.slice(errors.indexOf('| key | HTTP | error | with it |'));
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    expect(rows).toEqual(ENTRIES.map(docRow));
  });

  it('every entry is answered somewhere: production code names its key', () => {
    const admin = [...SOURCE_TEXT].filter(([file]) => file.startsWith(join('gateway', 'admin'))).map(([, text]) => text).join('\n');
    // invalidField is answered through invalid(field, message), the checks' one helper.
    const named = (key: AdminErrorKey): boolean => (key === 'invalidField' ? /\binvalid\(/ : new RegExp(`'${key}'`)).test(admin);
    const unused = ENTRIES.map(([key]) => key).filter((key) => !named(key));
    expect(unused).toEqual([]);
  });

  it('no other file builds an error answer of its own, nor spells out a registry text', () => {
    const builders = [...SOURCE_TEXT].filter(([, text]) => /new (?:HttpError|AdminError)\(/.test(text)).map(([file]) => file);
    expect(builders).toEqual([]);
    const copies: string[] = [];
    for (const [key, def] of ENTRIES) {
      const fragments = def.text.split(/\{\w+\}/).map((f) => f.trim()).filter((f) => f.length >= 16);
      for (const [file, source] of SOURCE_TEXT) {
        for (const fragment of fragments) if (source.includes(fragment)) copies.push(`${file}: ${key} "${fragment}"`);
      }
    }
    expect(copies).toEqual([]);
  });

  it('fills the text, the field, the headers and the body members from one set of values', () => {
    const forbidden = AdminError.of('forbidden', { route: 'GET /admin/tokens', role: 'admin', who: 'vera is a viewer' });
    expect([forbidden.status, forbidden.message, forbidden.extra, forbidden.field, forbidden.headers]).toEqual([
      403,
      'GET /admin/tokens needs the admin role; vera is a viewer.',
      { requiredRole: 'admin' },
      undefined,
      {},
    ]);
    const locked = AdminError.of('lockedOut', { retryAfter: 42 });
    expect([locked.status, locked.headers]).toEqual([429, { 'Retry-After': '42' }]);
    const unknown = AdminError.of('unknownQueryParameter', { name: 'limt', expected: '"limit"' });
    expect([unknown.message, unknown.field]).toEqual(['Unknown query parameter "limt"; expected "limit".', 'limt']);
    const field = invalid('limit', 'limit must be between 1 and 1000, got {x}.');
    expect([field.key, field.status, field.field, field.message]).toEqual(['invalidField', 400, 'limit', 'limit must be between 1 and 1000, got {x}.']);
  });

  it('a template holds only placeholders the code can fill (letters in braces, nothing else)', () => {
    for (const [key, def] of ENTRIES) {
      for (const template of [def.text, def.field ?? '', ...Object.values(def.headers ?? {}), ...Object.values(def.body ?? {})]) {
        expect(template.replace(/\{\w+\}/g, ''), key).not.toMatch(/[{}]/);
      }
    }
  });
});
