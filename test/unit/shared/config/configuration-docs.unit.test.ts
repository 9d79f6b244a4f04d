import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingEntries } from '../../../../shared/config/index.js';

/** docs/configuration.md is held to the declarations in shared/config/settings.ts. */

const DOC = path.resolve(import.meta.dirname, '../../../../docs/configuration.md');

interface DocRow {
  name: string;
  heading: string;
  /** `config.<section>` of the heading, or null under §Tuning. */
  section: string | null;
  defaultText: string;
  /** The section column of §Tuning's table. */
  tuningSection: string | null;
  secret: boolean;
}

function documentedRows(text: string): DocRow[] {
  const rows: DocRow[] = [];
  let heading = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) heading = line.slice(3).trim();
    const m = /^\| `([A-Z][A-Z0-9_]*)`( 🔒)? \| ([^|]*) \|(.*)$/.exec(line);
    if (m === null) continue;
    const tuning = heading.startsWith('Tuning');
    const rest = m[4]!.split('|').map((c) => c.trim());
    rows.push({
      name: m[1]!,
      heading,
      section: /\(`config\.(\w+)`\)/.exec(heading)?.[1] ?? null,
      defaultText: m[3]!.trim(),
      tuningSection: tuning ? (rest[0] ?? '').replace(/`/g, '') : null,
      secret: m[2] !== undefined,
    });
  }
  return rows;
}

describe('docs/configuration.md', () => {
  const rows = documentedRows(readFileSync(DOC, 'utf8'));
  const byName = new Map(rows.map((r) => [r.name, r]));

  it('documents every setting once, and nothing else', () => {
    const declared = settingEntries().map((e) => e.setting.env);
    expect(rows.map((r) => r.name).sort()).toEqual([...declared].sort());
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
  });

  it.each(settingEntries().map((e) => [e.setting.env, e] as const))('%s: its section, default and secrecy as declared', (_name, entry) => {
    const row = byName.get(entry.setting.env);
    expect(row, `${entry.setting.env} has no row`).toBeDefined();
    if (row === undefined) return;
    if (entry.setting.tuning) {
      expect(row.heading).toMatch(/^Tuning/);
      expect(row.tuningSection).toBe(entry.section);
    } else {
      expect(row.section, `${entry.setting.env} is under "${row.heading}"`).toBe(entry.section);
    }
    expect(row.defaultText).toBe(entry.setting.defaultText);
    expect(row.secret).toBe(entry.setting.secret);
  });
});
