/**
 * `npm run generate`: writes what is mechanical from the three tables (the event fields, the
 * operation catalogue, the settings; targets.ts), and says which files it changed.
 * `npm run generate -- --check` changes nothing and exits 1 when a file is out of date.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { outOfDate, REPO } from './targets.js';

const check = process.argv.includes('--check');
try {
  const stale = outOfDate();
  for (const { file, generated } of stale) {
    if (!check) writeFileSync(path.join(REPO, file), generated);
    console.log(`${check ? 'out of date' : 'wrote'}: ${file}`);
  }
  if (stale.length === 0) console.log('every generated file is up to date');
  process.exitCode = check && stale.length > 0 ? 1 : 0;
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 2;
}
