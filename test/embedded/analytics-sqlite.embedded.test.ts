/**
 * docs/analytics.md §The embedded store: SQLite, as an analyst runs it: each `sql` block of that
 * section with the sqlite3 program, read-only, on the database of a gateway that is running and
 * has stored events, a command and sensors; each answers with the rows the page says it gives.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';

function sqlBlocks(): string[] {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'analytics.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## The embedded store: SQLite'), doc.indexOf('## The scaled-out store: ClickHouse'));
  return [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

let t: TestApp;
let db = '';

/** A query through the sqlite3 program, read-only, as the page opens the database; rows as objects. */
function sqlite(query: string): Promise<Record<string, string>[]> {
  return new Promise((resolve, reject) => {
    execFile('sqlite3', ['-readonly', '-json', db, query], (err, out, errOut) => {
      if (err !== null) reject(new Error(`sqlite3 failed: ${errOut}`));
      else resolve(out.trim() === '' ? [] : (JSON.parse(out) as Record<string, string>[]));
    });
  });
}

beforeAll(async () => {
  t = await TestApp.start();
  // The queries look back from now: the gateway's clock is the wall clock here.
  t.now = Date.now();
  db = path.join(t.dataDir, 'gateway.sqlite');
  await t.provider('acme', 'secret-1');
  const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  const sensors = '<Sensores><pSensor><Clave>temp</Clave><Valor>4.5</Valor></pSensor><pSensor><Clave>door</Clave><Valor>open</Valor></pSensor></Sensores>';
  for (const [i, [dominio, latitud]] of [['AB123CD', '-34.6'], ['AB123CD', '-34.61'], ['ZZ999ZZ', '-34.62']].entries()) {
    const at = iso(t.now - (3 - i) * 60_000);
    const reply = await t.soap11('LoginYInsertarEvento2', `${xmlParams({ ...credentials(), ...event({ Dominio: dominio!, Codigo: String(i), FechaHoraEvento: at, FechaHoraRecepcion: at, Latitud: latitud! }), Valido: 'true' })}${sensors}`);
    expect(reply.text).toMatch(/Result>[1-9]\d*</);
  }
  expect((await t.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB123CD', equipo: '1' })).status).toBe(201);
});

afterAll(() => t.stop());

describe('docs/analytics.md, the SQLite queries', () => {
  const blocks = sqlBlocks();
  const expectations: ((rows: Record<string, string>[]) => void)[] = [
    (rows) => expect(rows).toMatchObject([{ system_user: 'acme', events: 3 }]),
    (rows) => expect(rows.map((r) => [r.dominio, r.latitud])).toEqual([['AB123CD', -34.61], ['ZZ999ZZ', -34.62]]),
    (rows) => expect(rows.map((r) => r.latitud)).toEqual([-34.6, -34.61]),
    (rows) => expect(rows).toMatchObject([{ events: 3, invalid_positions: 0 }]),
    (rows) => {
      expect(rows).toHaveLength(6);
      expect(rows.filter((r) => r.sensor === 'temp').map((r) => r.value)).toEqual(['4.5', '4.5', '4.5']);
    },
    (rows) => {
      expect(rows).toHaveLength(3);
      for (const r of rows) expect(r.answered_id).toBe(r.id);
    },
    (rows) => expect(rows).toEqual([{ system_user: 'acme', state: 'pending', commands: 1 }]),
  ];

  it('the page has the queries this test knows the answers of', () => {
    expect(blocks).toHaveLength(expectations.length);
  });

  it.each(blocks.map((query, i) => [i + 1, query] as const))('query %i runs on the live database and answers as the page says', async (n, query) => {
    const rows = await sqlite(query);
    expectations[n - 1]!(rows);
  });

  it('the page opens the database read-only with sqlite3, on the path npm start uses', () => {
    const doc = fs.readFileSync(path.join(REPO, 'docs', 'analytics.md'), 'utf8');
    expect(doc).toContain('sqlite3 -readonly -header -column data/gateway.sqlite');
    expect(fs.existsSync(db)).toBe(true);
  });
});
