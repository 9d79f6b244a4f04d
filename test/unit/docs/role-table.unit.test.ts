/** docs/admin-api.md's role table says what the routes declare (gateway/admin/routes/, derived by roles.ts), route for route. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTE_TABLE } from '../../helpers/admin-routes.js';

const DOC = path.resolve(import.meta.dirname, '..', '..', '..', 'docs', 'admin-api.md');

/** `METHOD /path` → role, from the rows after the `| route | role |` header. */
function documented(): Map<string, string> {
  const lines = fs.readFileSync(DOC, 'utf8').split('\n');
  const start = lines.indexOf('| route | role |');
  if (start < 0) throw new Error('docs/admin-api.md has no "| route | role |" table');
  const table = new Map<string, string>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [, routes = '', role = ''] = line.split('|').map((c) => c.trim());
    for (const m of routes.matchAll(/`([A-Z]+ [^`]+)`/g)) {
      if (table.has(m[1]!)) throw new Error(`${m[1]} appears twice in the table`);
      table.set(m[1]!, role);
    }
  }
  return table;
}

describe('docs/admin-api.md role table', () => {
  it('lists every declared route once, with its role, and nothing else', () => {
    expect(Object.fromEntries([...documented()].sort())).toEqual(Object.fromEntries([...ROUTE_TABLE].sort()));
  });
});
