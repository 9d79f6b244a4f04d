/**
 * The production code imports in one direction only, at every level:
 *
 * - **No circle of files**: no file reaches itself through relative imports (`import type`,
 *   `export … from`, `import()` and a .cjs file's `require` included). Each circle is reported
 *   with its files and the imports that close it.
 * - **No cycle of folders, at any depth**: inside every folder (the repository's root included),
 *   its subfolders and files are the nodes, and a file under one importing a file under another
 *   is an edge; no cycle may pass through a folder. So `shared/backends/kafka` and
 *   `shared/backends/ids` importing each other fail here even when no file circle joins them. A
 *   subfolder may import a file of its parent (an index and its entries: `routes/*.ts` importing
 *   `route.ts`), as long as that file does not import back into the subfolder.
 *
 * A cycle is broken by moving what both sides need below both (a types module, a lower folder),
 * never by an exception here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../helpers/paths.js';

/** File → the production files it imports (repository-relative paths, `/` separated). */
type FileGraph = ReadonlyMap<string, ReadonlySet<string>>;

const PRODUCTION = ['gateway', 'shared', 'worker', 'cli', 'main.ts'];
const SOURCE = /\.(ts|cjs|mjs)$/;
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|(?:^|\n)\s*import\s+'(\.{1,2}\/[^']+)'|import\('(\.{1,2}\/[^']+)'\)|require\('(\.{1,2}\/[^']+)'\)/g;

function sourceFiles(path: string): string[] {
  if (!existsSync(join(REPO, path))) return [];
  if (SOURCE.test(path)) return path.endsWith('.d.ts') ? [] : [path];
  const out: string[] = [];
  for (const entry of readdirSync(join(REPO, path), { withFileTypes: true })) {
    const child = `${path}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(child));
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(child);
  }
  return out;
}

/** `./x.js` from `a/b/c.ts` → `a/b/x.ts` (the source behind the compiled name), else the path as written. */
function resolveImport(from: string, specifier: string): string {
  const path = normalize(join(dirname(from), specifier)).split('\\').join('/');
  const source = path.replace(/\.js$/, '.ts');
  return existsSync(join(REPO, source)) ? source : path;
}

/** Every production file's relative imports; an import that names no file is returned apart (the reader would be wrong). */
function readGraph(): { graph: FileGraph; unresolved: string[] } {
  const files = PRODUCTION.flatMap(sourceFiles);
  const known = new Set(files);
  const graph = new Map<string, Set<string>>();
  const unresolved: string[] = [];
  for (const file of files) {
    const imports = new Set<string>();
    for (const m of readFileSync(join(REPO, file), 'utf8').matchAll(IMPORT)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
      if (known.has(target)) imports.add(target);
      else if (!existsSync(join(REPO, target))) unresolved.push(`${file} -> ${target}`);
    }
    graph.set(file, imports);
  }
  return { graph, unresolved };
}

/** Tarjan's strongly connected components with more than one node, each sorted, in a stable order. */
function components(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** Each circle of files: its files, then every import inside it. */
function fileCircles(graph: FileGraph): string[][] {
  return components(graph.keys(), (file) => graph.get(file) ?? []).map((circle) => [
    ...circle,
    ...circle.flatMap((from) => [...(graph.get(from) ?? [])].filter((to) => circle.includes(to)).map((to) => `  ${from} -> ${to}`)),
  ]);
}

/** The child of `folder` that holds `path` (`a/b` and `a/b/c/d.ts` → `a/b/c`), or null when `path` is not under it. */
function childOf(folder: string, path: string): string | null {
  const prefix = folder === '' ? '' : `${folder}/`;
  if (!path.startsWith(prefix)) return null;
  const slash = path.indexOf('/', prefix.length);
  return slash < 0 ? path : path.slice(0, slash);
}

/**
 * Inside every folder, the cycles among its children that pass through a subfolder (a cycle of
 * sibling files alone is a circle of files, reported by `fileCircles`). Each: where, the
 * children, and for every edge inside it one import that makes it.
 */
function folderCycles(graph: FileGraph): string[][] {
  const folders = new Set<string>(['']);
  for (const file of graph.keys()) for (let d = dirname(file); d !== '.'; d = dirname(d)) folders.add(d);
  const found: string[][] = [];
  for (const folder of [...folders].sort()) {
    /** child → child → one import behind the edge */
    const edges = new Map<string, Map<string, string>>();
    for (const [file, imports] of graph) {
      const from = childOf(folder, file);
      if (from === null) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      edges.set(from, out);
      for (const target of imports) {
        const to = childOf(folder, target);
        if (to !== null && to !== from && !out.has(to)) out.set(to, `${file} -> ${target}`);
      }
    }
    for (const cycle of components(edges.keys(), (child) => edges.get(child)?.keys() ?? [])) {
      if (cycle.every((child) => graph.has(child))) continue;
      const inside = cycle.flatMap((from) => [...(edges.get(from) ?? [])].filter(([to]) => cycle.includes(to)).map(([to, why]) => `  ${from} -> ${to} (${why})`));
      found.push([`in ${folder === '' ? 'the root' : `${folder}/`}: ${cycle.join(', ')}`, ...inside]);
    }
  }
  return found;
}

/** Test graphs: `['a.ts', 'b.ts']` pairs, importer first. */
function graphOf(imports: readonly (readonly [string, string])[]): FileGraph {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of imports) {
    graph.set(from, (graph.get(from) ?? new Set()).add(to));
    if (!graph.has(to)) graph.set(to, new Set());
  }
  return graph;
}

describe('the import graph', () => {
  const { graph, unresolved } = readGraph();

  it('is read whole: every relative import names a file', () => {
    expect(unresolved).toEqual([]);
    expect([...(graph.get('gateway/router.ts') ?? [])]).toContain('gateway/bindings/table.ts');
    expect([...(graph.get('shared/backends/embedded/writer-thread-main.cjs') ?? [])]).toContain('shared/runtime/warm-start.cjs');
    expect(graph.size).toBeGreaterThan(200);
  });

  it('has no circle of files', () => {
    expect(fileCircles(graph)).toEqual([]);
  });

  it('has no cycle of folders at any depth', () => {
    expect(folderCycles(graph)).toEqual([]);
  });

  it('keeps the layers apart: transport below bindings, the service and metadata apart from both, .NET behaviour apart from storage', () => {
    const importsOf = (folder: string): string[] => [...graph].filter(([file]) => file.startsWith(`${folder}/`)).flatMap(([, imports]) => [...imports]);
    // transport knows nothing of what travels over it.
    expect(importsOf('gateway/transport').filter((to) => to.startsWith('gateway/') && !to.startsWith('gateway/transport/'))).toEqual([]);
    // Neither the service nor the metadata pages depend on how a request arrived.
    for (const folder of ['gateway/service', 'gateway/metadata']) {
      expect(importsOf(folder).filter((to) => to.startsWith('gateway/bindings/') || to.startsWith('gateway/transport/'))).toEqual([]);
    }
    // .NET's behaviour (value parsing, dates, zones) knows nothing of where events are stored.
    expect(importsOf('shared/dotnet').filter((to) => to.startsWith('shared/backends/'))).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('find a circle of files and the imports that close it', () => {
    const g = graphOf([
      ['a/x.ts', 'a/y.ts'],
      ['a/y.ts', 'b/z.ts'],
      ['b/z.ts', 'a/x.ts'],
      ['c/w.ts', 'a/x.ts'],
    ]);
    expect(fileCircles(g)).toEqual([['a/x.ts', 'a/y.ts', 'b/z.ts', '  a/x.ts -> a/y.ts', '  a/y.ts -> b/z.ts', '  b/z.ts -> a/x.ts']]);
  });

  it('find a cycle of folders three levels down that no circle of files makes', () => {
    // p -> q and r -> s: no file reaches itself, but app/lib/one and app/lib/two import each other.
    const g = graphOf([
      ['app/lib/one/p.ts', 'app/lib/two/q.ts'],
      ['app/lib/two/r.ts', 'app/lib/one/s.ts'],
    ]);
    expect(fileCircles(g)).toEqual([]);
    expect(folderCycles(g)).toEqual([
      [
        'in app/lib/: app/lib/one, app/lib/two',
        '  app/lib/one -> app/lib/two (app/lib/one/p.ts -> app/lib/two/q.ts)',
        '  app/lib/two -> app/lib/one (app/lib/two/r.ts -> app/lib/one/s.ts)',
      ],
    ]);
  });

  it('find a folder and a sibling file that import each other', () => {
    const g = graphOf([
      ['app/admin/routes/a.ts', 'app/admin/route.ts'],
      ['app/admin/route.ts', 'app/admin/routes/b.ts'],
    ]);
    expect(folderCycles(g).map(([where]) => where)).toEqual(['in app/admin/: app/admin/route.ts, app/admin/routes']);
  });

  it('let a subfolder import its parent, and an index import its entries', () => {
    const g = graphOf([
      ['app/admin/routes.ts', 'app/admin/routes/a.ts'],
      ['app/admin/routes/a.ts', 'app/admin/route.ts'],
      ['app/admin/routes/a.ts', 'app/types.ts'],
    ]);
    expect(fileCircles(g)).toEqual([]);
    expect(folderCycles(g)).toEqual([]);
  });
});
