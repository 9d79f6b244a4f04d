// Makes the installed uWebSockets.js binaries load on glibc 2.36 (Debian 12), run by `npm install`
// (postinstall). The uWebSockets.js builds for current Node.js lines (@btc-vision/uwebsockets.js
// 20.57) were linked on a glibc 2.38 system and ask for it for three C23 functions only; every
// other symbol they use is in 2.36. elf-glibc.mjs rebinds those three to their older equivalents
// (docs/dependencies.md §uWebSockets.js on Debian 12 says why this route). The same bytes are
// produced on every host, whatever its glibc, so what CI tests is what the image runs.
//
// Then it loads the binary of the running Node.js in a child process with LD_BIND_NOW=1, so that
// every symbol it imports is bound at once: an install whose uWebSockets.js cannot load fails
// here, with the reason, rather than at the gateway's first start.
import console from 'node:console';
import process from 'node:process';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { glibcNeeds, lowerGlibcNeeds } from './elf-glibc.mjs';

/** Debian 12's glibc: the oldest the project supports (docs/dependencies.md). @type {[number, number]} */
export const GLIBC_FLOOR = [2, 36];

const root = path.resolve(import.meta.dirname, '..', '..');
const packageDir = path.join(root, 'node_modules', 'uWebSockets.js');

function lowerAll() {
  const changed = [];
  const rebinds = new Set();
  for (const file of readdirSync(packageDir).filter((f) => /^uws_linux_.*\.node$/.test(f))) {
    const full = path.join(packageDir, file);
    const buf = readFileSync(full);
    const rebound = lowerGlibcNeeds(buf, GLIBC_FLOOR);
    if (rebound.length === 0) continue;
    if (glibcNeeds(buf, GLIBC_FLOOR).beyond.length > 0) throw new Error(`${file}: still needs a glibc newer than 2.36`);
    writeFileSync(full, buf);
    changed.push(file);
    for (const r of rebound) rebinds.add(`${r.symbol} -> ${r.now}`);
  }
  return { changed, rebinds: [...rebinds] };
}

function checkLoads() {
  if (process.platform !== 'linux') return;
  const probe = `const m = require(${JSON.stringify(packageDir)}); if (typeof m.App !== 'function') throw new Error('no App export');`;
  try {
    execFileSync(process.execPath, ['-e', probe], { env: { ...process.env, LD_BIND_NOW: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = error instanceof Error && 'stderr' in error ? String(error.stderr) : String(error);
    throw new Error(`uWebSockets.js does not load on Node.js ${process.version} here: ${stderr.trim().split('\n').slice(-3).join(' ')}`, { cause: error });
  }
}

try {
  const { changed, rebinds } = lowerAll();
  if (changed.length > 0) console.log(`uWebSockets.js: ${changed.length} Linux binaries made loadable on glibc 2.36 (${rebinds.join(', ')}; docs/dependencies.md)`);
  checkLoads();
} catch (error) {
  console.error(`scripts/runtime/uws-glibc.mjs: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
