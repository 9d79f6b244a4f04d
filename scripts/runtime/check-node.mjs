// Is the running Node.js one the project supports? The range is package.json's `engines.node`
// (caret ranges joined by `||`, one per LTS line). Plain JavaScript that runs on any Node, so that
// `npm install` on an older one stops here with what to do instead of failing later in a native build.
// Exit 0 when supported; else one line on stderr and exit 1. `--quiet` prints nothing either way.
import process from 'node:process';
import { URL } from 'node:url';
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const range = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).engines.node;
const wanted = readFileSync(new URL('.node-version', root), 'utf8').trim();

/**
 * [major, minor, patch] of a version text, without a leading `v`.
 * @param {string} text @returns {[number, number, number]}
 */
const parts = (text) => {
  const [major = 0, minor = 0, patch = 0] = text.replace(/^v/, '').split('.').map(Number);
  return [major, minor, patch];
};

/** `^a.b.c`: the same major, at least a.b.c. @param {string} version @param {string} caret */
function satisfiesCaret(version, caret) {
  const [major, minor, patch] = parts(version);
  const [wantMajor, wantMinor, wantPatch] = parts(caret.replace(/^\^/, ''));
  if (major !== wantMajor) return false;
  if (minor !== wantMinor) return minor > wantMinor;
  return patch >= wantPatch;
}

/** @param {string} version */
export function supports(version) {
  return String(range).split('||').map((r) => r.trim()).some((r) => satisfiesCaret(version, r));
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const ok = supports(process.versions.node);
  if (!ok && !process.argv.includes('--quiet')) {
    process.stderr.write(
      `Node.js ${process.versions.node} is not supported (engines: ${range}; CI runs ${wanted}). ` +
        `Install Node.js ${wanted.split('.')[0]}, or run \`eval "$(bash scripts/runtime/node.sh)"\` to bring ${wanted} from the npm registry into .runtime/ for this shell.\n`,
    );
  }
  process.exit(ok ? 0 : 1);
}
