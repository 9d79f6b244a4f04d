/**
 * The settings tables of docs/configuration.md, one per section of SETTINGS
 * (shared/config/settings.ts) and one for the tuning switches, written from the declarations:
 * which settings there are, in which section and order, their secrecy mark and their defaults.
 * The meaning column is the page's own prose (a setting's `doc` is one line for `--config`; the
 * page may say more): a row keeps the meaning it has, wherever it stood, and a new setting's row
 * starts with its `doc`. So a new setting is one entry in settings.ts, and `npm run generate`.
 */
import { settingEntries } from '../../shared/config/load.js';
import { markdownTable } from './text.js';

export const SETTINGS_SOURCE = 'shared/config/settings.ts';
export const TUNING_REGION = 'settings-tuning';
export const sectionRegion = (section: string): string => `settings-${section}`;

/** The meaning cell of every setting's row in `page`, by variable (the last cell of its row). */
export function documentedMeanings(page: string): Map<string, string> {
  const meanings = new Map<string, string>();
  for (const line of page.split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]*)`(?: 🔒)? \|(.*)\|$/.exec(line);
    if (m === null) continue;
    // Cells split on unescaped pipes: a meaning may hold `\|`.
    const cells = m[2]!.split(/(?<!\\)\|/).map((c) => c.trim());
    meanings.set(m[1]!, cells[cells.length - 1]!);
  }
  return meanings;
}

/** The tables of the page, by region id: every section that has settings, then the tuning switches. */
export function settingsTables(page: string): Map<string, string> {
  const meanings = documentedMeanings(page);
  const entries = settingEntries();
  const name = (e: (typeof entries)[number]): string => `\`${e.setting.env}\`${e.setting.secret ? ' 🔒' : ''}`;
  const meaning = (e: (typeof entries)[number]): string => meanings.get(e.setting.env) ?? e.setting.doc.replaceAll('|', '\\|');
  const tables = new Map<string, string>();
  const sections = [...new Set(entries.map((e) => e.section))];
  for (const section of sections) {
    const rows = entries.filter((e) => e.section === section && !e.setting.tuning).map((e) => [name(e), e.setting.defaultText, meaning(e)]);
    if (rows.length > 0) tables.set(sectionRegion(section), markdownTable(['variable', 'default', 'meaning'], rows, [], false));
  }
  const tuning = entries.filter((e) => e.setting.tuning).map((e) => [name(e), e.setting.defaultText, `\`${e.section}\``, meaning(e)]);
  tables.set(TUNING_REGION, markdownTable(['variable', 'default', 'section', 'meaning'], tuning, [], false));
  return tables;
}
