/**
 * The production folders import each other in one direction only. A node of the graph is a
 * subsystem: a folder directly under gateway/ or shared/ with everything below it
 * (gateway/bindings/soap/scanner is gateway/bindings), or a file directly in gateway/, shared/,
 * worker/ or cli/ (a composition root such as gateway/app.ts is its own node); an edge is a relative
 * import, `import type` included. A subfolder may import its parent (an index and its entries), but
 * two subsystems that import each other fail here, naming a file behind each edge: that is how
 * "three folders that import each other" starts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../helpers/paths.js';

const ROOT = REPO;
const PRODUCTION = ['gateway', 'shared', 'worker', 'cli'];
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|import\('(\.{1,2}\/[^']+)'\)/g;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** `gateway/bindings/soap/scanner/tags.ts` → `gateway/bindings`; `gateway/app.ts` → itself. */
function subsystem(file: string): string {
  const parts = file.split(sep);
  return parts.length <= 2 ? file : parts.slice(0, 2).join('/');
}

/** Subsystem → subsystem → one file that makes the edge (for the failure message). */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of PRODUCTION.flatMap(sourceFiles)) {
    const from = subsystem(file);
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(IMPORT)) {
      const to = subsystem(normalize(join(dirname(file), m[1] ?? m[2] ?? '')).replace(/\.js$/, '.ts'));
      if (to !== from && !edges.has(to)) edges.set(to, file);
    }
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one folder: each is a cycle. */
function cycles(graph: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
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
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('folder imports', () => {
  const graph = folderGraph();

  it('form no cycle between production folders', () => {
    const explained = cycles(graph).map((component) =>
      component.flatMap((from) =>
        [...(graph.get(from) ?? new Map<string, string>())].filter(([to]) => component.includes(to)).map(([to, file]) => `${from} -> ${to} (${file})`),
      ),
    );
    expect(explained).toEqual([]);
  });

  it('keep the request pipeline layered: transport below bindings, bindings below the router', () => {
    const importsOf = (folder: string): string[] => [...(graph.get(folder)?.keys() ?? [])];
    // transport knows nothing of what travels over it.
    expect(importsOf('gateway/transport').filter((to) => to.startsWith('gateway/'))).toEqual([]);
    // Neither the service nor the metadata pages depend on how a request arrived.
    for (const folder of ['gateway/service', 'gateway/metadata']) {
      expect(importsOf(folder).filter((to) => to.startsWith('gateway/bindings') || to.startsWith('gateway/transport'))).toEqual([]);
    }
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const g = new Map([
      ['a', new Map([['b', 'a/x.ts']])],
      ['b', new Map([['c', 'b/y.ts']])],
      ['c', new Map([['a', 'c/z.ts']])],
      ['d', new Map([['a', 'd/w.ts']])],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('reads the imports it must (a real edge of the graph)', () => {
    expect(graph.get('gateway/bindings')?.get('gateway/transport')).toMatch(/^gateway\/bindings\//);
    expect(graph.get('gateway/router.ts')?.has('gateway/bindings')).toBe(true);
  });
});
