/**
 * docs/configuration.md's tables are the declarations' (shared/config/settings.ts): a setting the
 * page lacks gets its row with its one-line `doc`, a row in the wrong table goes back to its own
 * with the meaning the page gave it, and nothing else of the page changes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { documentedMeanings, sectionRegion, settingsTables } from '../../../../scripts/generate/settings-docs.js';
import { REPO, TARGETS } from '../../../../scripts/generate/targets.js';
import { settingEntries } from '../../../../shared/config/index.js';

const FILE = 'docs/configuration.md';
const PAGE = readFileSync(path.join(REPO, FILE), 'utf8');
const render = TARGETS.find((t) => t.file === FILE)!.render;
const rowOf = (page: string, env: string): string => page.split('\n').find((l) => l.startsWith(`| \`${env}\``))!;

describe('docs/configuration.md from the settings', () => {
  it('every setting has a row; a setting without one gets its doc', () => {
    const withoutRow = PAGE.replace(`${rowOf(PAGE, 'SESSION_MAX')}\n`, '');
    expect(documentedMeanings(withoutRow).has('SESSION_MAX')).toBe(false);
    const doc = settingEntries().find((e) => e.setting.env === 'SESSION_MAX')!.setting.doc;
    expect(rowOf(render(withoutRow), 'SESSION_MAX')).toBe(`| \`SESSION_MAX\` | \`1000000\` | ${doc} |`);
    expect(render(PAGE)).toBe(PAGE);
  });

  it('a row under the wrong heading goes back to its section with its meaning; default and secrecy come from the declaration', () => {
    const row = rowOf(PAGE, 'REDIS_PASSWORD');
    const moved = PAGE.replace(`${row}\n`, '').replace(rowOf(PAGE, 'PORT'), `${rowOf(PAGE, 'PORT')}\n${row.replace(' 🔒', '').replace('| (none) |', '| `x` |')}`);
    expect(render(moved)).toBe(PAGE);
  });

  it('one table per section with settings, and one for the tuning switches', () => {
    const sections = new Set(settingEntries().filter((e) => !e.setting.tuning).map((e) => e.section));
    expect([...settingsTables(PAGE).keys()]).toEqual([...[...sections].map(sectionRegion), 'settings-tuning']);
  });
});
