/**
 * `npm run diff:scanner -- --count 1000000 --seed 7 [--from 0] [--corpus DIR] [--out DIR]`
 *
 * Feeds generated and mutated envelopes to the saxes-based reference reader and to the scanner, and
 * those they agree on to the compiled SOAP decoder and its interpreted reference, and prints the
 * counts. Each disagreement is shrunk and saved under --out (default
 * .scanner-diff/, git-ignored) as a .bin body plus a .txt explanation; the exit code is 1 when
 * there was any. The material mutated besides generated envelopes is the hardening fuzzer's SOAP
 * corpus and mutated bodies (test/fuzz/; --fuzz-cases N of them, default 20,000); --corpus adds
 * every file of a directory.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { explain, makeCase, newTally, record, runCase } from './campaign.js';
import { fuzzSoapBodies } from './fuzz-corpus.js';
import { minimize } from './minimize.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    from: { type: 'string', default: '0' },
    corpus: { type: 'string' },
    'fuzz-cases': { type: 'string', default: '20000' },
    out: { type: 'string', default: '.scanner-diff' },
  },
});

const count = Number(values.count);
const seed = Number(values.seed);
const from = Number(values.from);
const corpus: Uint8Array[] = fuzzSoapBodies(seed, Number(values['fuzz-cases']));
if (values.corpus !== undefined) {
  for (const name of readdirSync(values.corpus)) {
    const path = join(values.corpus, name);
    if (statSync(path).isFile()) corpus.push(readFileSync(path));
  }
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

const started = Date.now();
const cpuStart = cpuSeconds();
const tally = newTally();
const report = Math.max(1, Math.floor(count / 20));
for (let i = from; i < from + count; i++) {
  const c = makeCase(seed, i, corpus);
  record(tally, c, runCase(c.bytes, c.plan));
  if ((i - from + 1) % report === 0) {
    process.stderr.write(`${i - from + 1}/${count} cases, ${tally.mismatches.length} mismatches, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  }
}

if (tally.mismatches.length > 0) mkdirSync(values.out, { recursive: true });
for (const { case: c } of tally.mismatches.slice(0, 50)) {
  const small = minimize(c.bytes, c.plan);
  const shrunk = { ...c, bytes: small.bytes, plan: small.plan };
  const base = join(values.out, `seed${seed}-case${c.index}`);
  writeFileSync(`${base}.bin`, small.bytes);
  writeFileSync(`${base}.txt`, `${explain(shrunk, runCase(small.bytes, small.plan))}\n\noriginal:\n${explain(c, runCase(c.bytes, c.plan))}\n`);
}

const wall = (Date.now() - started) / 1000;
console.log(`seed ${seed}, cases ${from}..${from + count - 1}${values.corpus ? `, corpus ${values.corpus} (${corpus.length} files)` : ''}`);
console.log(`generated ${tally.generated}, mutated ${tally.mutated}, corpus ${tally.corpus}`);
console.log(`accepted by both ${tally.accepted}, rejected by both ${tally.rejected}: ${JSON.stringify(tally.byError)}`);
console.log(`documented differences ${JSON.stringify(tally.known)}`);
console.log(`mismatches ${tally.mismatches.length}${tally.mismatches.length > 0 ? ` (shrunk repros in ${values.out}/)` : ''}`);
console.log(`time ${wall.toFixed(1)} s wall, ${(cpuSeconds() - cpuStart).toFixed(1)} s CPU`);
process.exitCode = tally.mismatches.length > 0 ? 1 : 0;
