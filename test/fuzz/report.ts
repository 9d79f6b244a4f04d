/** Human-readable results of a fuzz run, and the repro files saved for each violation group. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Answer } from './client.js';
import type { Repro, RunResult } from './runner.js';

const MB = 1024 * 1024;

/** Request bytes as readable text: escapes for non-printables, long runs of one character folded. */
export function printable(bytes: Buffer, limit = 3000): string {
  let out = bytes
    .toString('latin1')
    .replace(/(.)\1{63,}/gs, (run, c: string) => `${c}{×${run.length}}`)
    .replace(/[^\x20-\x7e\n]/g, (c) => (c === '\r' ? '\\r' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
  if (out.length > limit) out = `${out.slice(0, limit)}… (${bytes.length} bytes)`;
  return out;
}

function answerHead(a: Answer): string {
  if (a.outcome !== 'answered') return `${a.outcome} after ${Math.round(a.ms)} ms`;
  const ct = a.headers.find(([k]) => k === 'content-type')?.[1] ?? '(no Content-Type)';
  return `${a.status} ${ct} ${printable(a.body, 600)}`;
}

export function reproCommand(r: Pick<Repro, 'seed' | 'index'>): string {
  return `npm run fuzz -- --seed ${r.seed} --case ${r.index}`;
}

export function describeRepro(r: Repro): string {
  return [
    `  case ${r.index} (seed ${r.seed}) from ${r.seedName}, mutations: ${r.mutations.join(', ') || '(none)'}`,
    `  reproduce: ${reproCommand(r)}`,
    `  detail: ${r.detail}`,
    `  answer: ${answerHead(r.answer)}`,
    `  request (${r.request.length} bytes):`,
    ...printable(r.request).split('\n').map((l) => `    ${l}`),
  ].join('\n');
}

const mb = (n: number | null): string => (n === null ? '-' : `${(n / MB).toFixed(0)} MB`);

export function summary(r: RunResult): string {
  const lines: string[] = [];
  const rate = r.cases / (r.elapsedMs / 1000);
  lines.push(`seed ${r.seed}: ${r.cases} cases in ${(r.elapsedMs / 1000).toFixed(1)} s (${rate.toFixed(0)} cases/s)`);
  const statuses = [...r.statuses.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}: ${n}`);
  lines.push(`statuses: ${statuses.join(', ')}`);
  lines.push(`crashes: ${r.crash === null ? 0 : 1}, hangs (no answer in time): ${r.hangs}`);
  lines.push(`gateway RSS: start ${mb(r.rss.start)}, peak ${mb(r.rss.peak)}, end ${mb(r.rss.end)}`);
  lines.push(`canary (valid LoginYInsertarEvento after every 1,000 cases, stored): ${r.canaries.passed} passed, ${r.canaries.failed.length} failed`);
  for (const f of r.canaries.failed.slice(0, 5)) lines.push(`  canary ${f.k}: ${f.detail}`);
  if (r.loggedErrors.size > 0) {
    lines.push('errors the gateway logged:');
    for (const [msg, n] of [...r.loggedErrors.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10)) lines.push(`  ${n} × ${msg}`);
  }
  if (r.crash !== null) {
    lines.push(`CRASH: the gateway exited (${r.crash.code ?? r.crash.signal}); cases in flight:`);
    for (const c of r.crash.inFlight) lines.push(describeRepro(c));
    lines.push('last log lines:', ...r.crash.log.slice(-10).map((l) => `  ${l}`));
  }
  const groups = [...r.groups.values()].sort((a, b) => b.count - a.count);
  lines.push(`oracle violations: ${groups.reduce((s, g) => s + g.count, 0)} in ${groups.length} kinds`);
  for (const g of groups) {
    const seeds = [...g.seeds.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([s, n]) => `${s} ${n}`);
    lines.push(`- ${g.kind}: ${g.count} (${seeds.join(', ')})`);
    lines.push(describeRepro(g.repro));
    const others = [...g.variants.values()].filter((r) => r.index !== g.repro.index);
    if (others.length > 0) lines.push(`  other mutation lists with this result: ${others.map((r) => `case ${r.index} (${r.mutations.join(', ')})`).join('; ')}`);
  }
  return lines.join('\n');
}

/** Writes one `.http` file (the exact request bytes) and one `.txt` (what happened) per violation kind. */
export function saveRepros(r: RunResult, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const all = [...r.groups.values()].map((g) => ({ name: g.kind, repro: g.repro, count: g.count }));
  if (r.crash !== null) for (const c of r.crash.inFlight) all.push({ name: `crash-case-${c.index}`, repro: c, count: 1 });
  for (const { name, repro, count } of all) {
    const slug = `seed${repro.seed}-case${repro.index}-${name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 80)}`;
    writeFileSync(path.join(dir, `${slug}.http`), repro.request);
    writeFileSync(path.join(dir, `${slug}.txt`), `${name} (${count} cases)\n${describeRepro(repro)}\n`);
    written.push(path.join(dir, `${slug}.http`));
  }
  writeFileSync(path.join(dir, `seed${r.seed}-summary.txt`), `${summary(r)}\n`);
  return written;
}
