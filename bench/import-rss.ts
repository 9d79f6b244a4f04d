/**
 * The CLI's peak memory importing a large CSV (1.66 GB for 100 MB when the CLI read the whole file), before and
 * after, in one run. The file is a trips CSV of IMPORT_MB megabytes for one provider, cycling over
 * 1,000 Dominios (so the server's work per call stays small and the CLI's own memory is what
 * grows). "Before" is as in bench/admin-load.ts: BENCH_BEFORE_ROOT, or a build of BENCH_BEFORE_REF.
 * Run: npm run bench:import  (env IMPORT_MB, default 100)
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { peakRssKb } from './lib/proc.js';
import { startServer } from './lib/server.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const IMPORT_MB = Number(process.env.IMPORT_MB ?? 100);

function beforeRoot(): string {
  if (process.env.BENCH_BEFORE_ROOT) return process.env.BENCH_BEFORE_ROOT;
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-before-'));
  execFileSync('sh', ['-c', `git archive ${process.env.BENCH_BEFORE_REF ?? 'main'} | tar -x -C ${dir}`], { cwd: ROOT });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

function writeCsv(file: string): number {
  const out = fs.openSync(file, 'w');
  let bytes = 0;
  let lines = 0;
  fs.writeSync(out, 'systemUser,dominio,nroSerie\n');
  while (bytes < IMPORT_MB * 1e6) {
    const rows: string[] = [];
    for (let i = 0; i < 10_000; i++, lines++) rows.push(`bench,D${String(lines % 1000).padStart(6, '0')},SERIE-${String(lines).padStart(18, '0')}`);
    const text = `${rows.join('\n')}\n`;
    fs.writeSync(out, text);
    bytes += Buffer.byteLength(text);
  }
  fs.closeSync(out);
  return lines;
}

/** Runs the CLI's import in one node process (no tsx wrapper) and follows its peak RSS. */
async function importPeak(root: string, adminUrl: string, file: string): Promise<{ peakMb: number; seconds: number; code: number | null; tail: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/admin.ts', '--url', adminUrl, '--token', 'bench', 'import', 'trips', file], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let peak = 0;
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => (out = (out + d).slice(-2000)));
  const timer = setInterval(() => {
    const kb = child.pid === undefined ? 0 : peakRssKb(child.pid);
    if (kb > peak) peak = kb;
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(timer);
  return { peakMb: Math.round(peak / 1024), seconds: Math.round((performance.now() - started) / 100) / 10, code, tail: out.slice(-300) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-import-'));
  const file = path.join(dir, 'trips.csv');
  const lines = writeCsv(file);
  const size = Math.round(fs.statSync(file).size / 1e6);
  const server = await startServer({});
  const rows: string[] = [];
  try {
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    for (const [label, root] of [
      ['before', beforeRoot()],
      ['after', ROOT],
    ] as const) {
      const r = await importPeak(root, server.adminUrl, file);
      rows.push(`| ${label} | ${size} | ${lines} | ${r.peakMb} | ${r.seconds} | ${r.code} |`);
      console.error(rows[rows.length - 1], r.tail.replace(/\s+/g, ' ').slice(-200));
    }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nCLI import of a trips CSV, peak RSS of the CLI process, ${new Date().toISOString()}\n`);
  console.log('| CLI | file MB | lines | peak RSS MB | seconds | exit code |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
