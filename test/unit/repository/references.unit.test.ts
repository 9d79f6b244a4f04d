/**
 * Every file path and every section reference (a Markdown file name, then the section sign and a
 * heading) that the code and the docs name must exist: a moved file or a renamed heading fails
 * here, naming each place that still points at the old one.
 * Scanned: every production, test, bench and script source, and every Markdown file except the
 * lab notebook (bench/LOG.md keeps the paths of its day).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../helpers/paths.js';

const SKIP_DIRS = new Set(['node_modules', 'dist', 'data', '.git', '.services', 'test-results', 'fuzz-out', 'coverage', '.scanner-diff', 'out', 'tmp']);
const SKIP_FILES = new Set(['bench/LOG.md']);
const SCANNED = /\.(ts|tsx|md|sh|cjs|mjs|js|yml|yaml|conf|lua|py|proto)$/;
const TOP = ['gateway', 'shared', 'worker', 'cli', 'console', 'test', 'bench', 'scripts', 'deploy', 'docs'];

function files(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
    if (entry.name.startsWith('.') && entry.name !== '.ci') continue;
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) out.push(...files(rel));
    } else if (SCANNED.test(entry.name) && !SKIP_FILES.has(rel)) out.push(rel);
  }
  return out;
}

/** Repository paths written out in full: `gateway/app.ts`, `docs/running.md`, `test/fixtures/asmx/`. */
const REPO_PATH = new RegExp(`(?<![\\w./-])((?:${TOP.join('|')})/[\\w./-]*[\\w/])`, 'g');
/** Markdown links to a relative file: `[running.md](running.md)`. */
const MD_LINK = /\]\(([^)#\s]+?)(?:#[^)]*)?\)/g;
/** A Markdown file name followed by the section sign and a heading, e.g. docs/protocol.md §Errors. */
const SECTION = /([\w./-]+\.md) §"?([^\n"`]+)/g;

/** Looks like a file or folder name rather than prose that merely contains a slash. */
const pathLike = (p: string): boolean => /\.[a-z0-9]+$/i.test(p) || p.endsWith('/');

/** Globs and placeholders are patterns, not paths. */
const concrete = (p: string): boolean => !/[*<>{}]|\.\.\./.test(p);

function headings(file: string): string[] {
  return readFileSync(path.join(REPO, file), 'utf8')
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) => l.replace(/^#+ /, '').trim());
}

const word = (w: string): string => w.toLowerCase().replace(/^[([{"'`]+|[)\]}.,;:"'`]+$/g, '');

/**
 * Whether the text after § names one of the target's headings. A reference may quote a heading
 * in full and go on with prose ("§Errors, where..."), or quote its start ("§2026-11-26 (fifth
 * session)" of a longer heading): the leading words must agree with a heading's, up to the end of
 * the heading, the end of the text, a word that closes the reference (",", ")", "."), or for at
 * least two words.
 */
function namesAHeading(rest: string, targetHeadings: readonly string[]): boolean {
  const tw = rest.trim().split(/\s+/).filter((w) => w !== '');
  return targetHeadings.some((heading) => {
    const hw = heading.split(/\s+/).filter((w) => w !== '');
    let m = 0;
    while (m < tw.length && m < hw.length && word(tw[m]!) === word(hw[m]!) && word(tw[m]!) !== '') m++;
    if (m === 0) return false;
    return m >= 2 || m === hw.length || m === tw.length || /[).,;:"'`]$/.test(tw[m - 1]!);
  });
}

interface Stale {
  where: string;
  what: string;
}

function staleReferences(): Stale[] {
  const stale: Stale[] = [];
  for (const file of files('')) {
    const text = readFileSync(path.join(REPO, file), 'utf8');
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      const where = `${file}:${i + 1}`;
      for (const m of line.matchAll(REPO_PATH)) {
        const p = m[1]!.replace(/[.]+$/, '');
        if (!pathLike(p) || !concrete(p)) continue;
        // `shared/config/index.js` in a specifier or a dist path is its .ts source here.
        const source = p.endsWith('.js') ? `${p.slice(0, -3)}.ts` : p;
        if (!existsSync(path.join(REPO, p)) && !existsSync(path.join(REPO, source))) stale.push({ where, what: p });
      }
      if (file.endsWith('.md')) {
        for (const m of line.matchAll(MD_LINK)) {
          const target = m[1]!;
          if (/^[a-z]+:/i.test(target) || !concrete(target)) continue;
          if (!existsSync(path.join(REPO, path.dirname(file), target))) stale.push({ where, what: target });
        }
      }
      for (const m of line.matchAll(SECTION)) {
        const doc = m[1]!;
        const candidates = [path.join(path.dirname(file), doc), doc, path.join('docs', path.basename(doc))].map((p) => path.normalize(p));
        const target = candidates.find((c) => existsSync(path.join(REPO, c)));
        if (target === undefined) {
          stale.push({ where, what: doc });
          continue;
        }
        if (!namesAHeading(m[2]!, headings(target))) stale.push({ where, what: `${doc} §${m[2]!.slice(0, 40)}` });
      }
    });
  }
  return stale;
}

describe('references in code and docs', () => {
  it('name files and headings that exist', () => {
    const stale = staleReferences();
    expect(stale.map((s) => `${s.where}: ${s.what}`)).toEqual([]);
  });
});
