import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { brotliOptions, GZIP_OPTIONS } from '../gateway/admin/console-assets.js';

/**
 * Bundles the operators' console (console/src, Preact + uPlot) with esbuild into dist/console:
 * index.html plus content-hashed script and style sheet, which the admin server serves at `/` and
 * `/console/`. Nothing is fetched at run time. Takes well under a second.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
export const CONSOLE_OUT_DIR = path.join(ROOT, 'dist', 'console');
/** The first load's budget (HTML + JS + CSS, compressed), so the console opens quickly on a slow link. */
export const FIRST_LOAD_BUDGET_BYTES = 200 * 1024;
/** URL prefix of the hashed assets (the admin server maps it onto the output folder). */
export const ASSET_PREFIX = '/console/';

export interface BuiltFile {
  name: string;
  bytes: number;
  gzipBytes: number;
}

export interface ConsoleBuild {
  outDir: string;
  files: BuiltFile[];
  /** index.html + script + style sheet, gzip level 9 (what the admin server sends). */
  firstLoadGzipBytes: number;
  /** False when the output was already built from the same inputs and was kept as it was. */
  rebuilt: boolean;
}

/** In the output folder: the digest of the inputs it was built from (no extension the admin server serves). */
const INPUTS_FILE = 'build-inputs.sha256';

/**
 * What the bundle is made of: the console's sources and page, this script, the compression
 * settings, and the locked dependency versions (Preact, Leaflet, uPlot, esbuild).
 */
export const CONSOLE_INPUTS = [path.join(ROOT, 'console', 'src'), path.join(ROOT, 'console', 'index.html'), path.join(ROOT, 'console', 'build.ts'), path.join(ROOT, 'gateway', 'admin', 'console-assets.ts'), path.join(ROOT, 'package-lock.json')];

/** SHA-256 over every input file's path (relative to the repository) and bytes, in name order. */
export function inputsDigest(inputs: readonly string[] = CONSOLE_INPUTS): string {
  const files: string[] = [];
  const walk = (p: string): void => {
    if (fs.statSync(p).isDirectory()) for (const name of fs.readdirSync(p).sort()) walk(path.join(p, name));
    else files.push(p);
  };
  for (const input of inputs) walk(input);
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${path.relative(ROOT, file)}\0`).update(fs.readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/** The build already in `outDir`, when it was made from inputs with this digest and is whole; else null. */
function upToDate(outDir: string, digest: string): ConsoleBuild | null {
  try {
    if (fs.readFileSync(path.join(outDir, INPUTS_FILE), 'utf8') !== digest) return null;
    const html = fs.readFileSync(path.join(outDir, 'index.html'), 'utf8');
    const names = [...html.matchAll(new RegExp(`${ASSET_PREFIX}([^"']+)`, 'g'))].map((m) => m[1]!);
    const files = ['index.html', ...names].map((name) => sizes(outDir, name));
    return { outDir, files, firstLoadGzipBytes: files.reduce((sum, f) => sum + f.gzipBytes, 0), rebuilt: false };
  } catch {
    return null;
  }
}

function sizes(dir: string, name: string): BuiltFile {
  const bytes = fs.statSync(path.join(dir, name)).size;
  return { name, bytes, gzipBytes: fs.statSync(path.join(dir, `${name}.gz`)).size };
}

/**
 * The compressed copies the admin server sends, made once here rather than at every start (at
 * the best levels they cost about half a second of CPU, which a starting gateway would spend with
 * its event loop blocked).
 */
function compress(dir: string, name: string): void {
  const file = path.join(dir, name);
  const bytes = fs.readFileSync(file);
  fs.writeFileSync(`${file}.gz`, gzipSync(bytes, GZIP_OPTIONS));
  fs.writeFileSync(`${file}.br`, brotliCompressSync(bytes, brotliOptions(bytes.length)));
}

/**
 * Builds into a temporary folder, then swaps it in, so a reader never sees half a build. Nothing
 * is done when `outDir` holds a whole build of the same inputs (`npm start` builds before every
 * start); `force` builds anyway.
 */
export async function buildConsole(outDir = CONSOLE_OUT_DIR, { force = false, inputs = CONSOLE_INPUTS }: { force?: boolean; inputs?: readonly string[] } = {}): Promise<ConsoleBuild> {
  const digest = inputsDigest(inputs);
  const current = force ? null : upToDate(outDir, digest);
  if (current !== null) return current;
  const staging = `${outDir}.staging-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  const result = await build({
    entryPoints: [path.join(ROOT, 'console', 'src', 'main.tsx')],
    outdir: staging,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    charset: 'utf8',
    metafile: true,
    // Leaflet's style sheet names a few small icons: inlined, so nothing is fetched from elsewhere.
    loader: { '.png': 'dataurl', '.svg': 'dataurl' },
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => path.basename(p));
  const script = outputs.find((name) => name.endsWith('.js'));
  const styles = outputs.find((name) => name.endsWith('.css'));
  if (script === undefined || styles === undefined) throw new Error(`console build produced no script or style sheet: ${outputs.join(', ')}`);

  const template = fs.readFileSync(path.join(ROOT, 'console', 'index.html'), 'utf8');
  const html = template.replace('%JS%', `${ASSET_PREFIX}${script}`).replace('%CSS%', `${ASSET_PREFIX}${styles}`);
  fs.writeFileSync(path.join(staging, 'index.html'), html);
  for (const name of ['index.html', script, styles]) compress(staging, name);
  fs.writeFileSync(path.join(staging, INPUTS_FILE), digest);

  const previous = `${outDir}.previous-${process.pid}`;
  fs.mkdirSync(path.dirname(outDir), { recursive: true });
  if (fs.existsSync(outDir)) fs.renameSync(outDir, previous);
  fs.renameSync(staging, outDir);
  fs.rmSync(previous, { recursive: true, force: true });

  const files = ['index.html', script, styles].map((name) => sizes(outDir, name));
  return { outDir, files, firstLoadGzipBytes: files.reduce((sum, f) => sum + f.gzipBytes, 0), rebuilt: true };
}

export function describeBuild(built: ConsoleBuild): string {
  const kb = (n: number): string => `${(n / 1024).toFixed(1)} KB`;
  const lines = built.files.map((f) => `  ${f.name.padEnd(28)} ${kb(f.bytes).padStart(9)}  gzip ${kb(f.gzipBytes).padStart(8)}`);
  const verdict = built.firstLoadGzipBytes < FIRST_LOAD_BUDGET_BYTES ? 'within' : 'OVER';
  return [
    built.rebuilt ? `console built into ${path.relative(ROOT, built.outDir)}:` : `console in ${path.relative(ROOT, built.outDir)} is up to date with its sources:`,
    ...lines,
    `  first load ${kb(built.firstLoadGzipBytes)} gzip, ${verdict} the ${kb(FIRST_LOAD_BUDGET_BYTES)} budget`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildConsole();
  console.log(describeBuild(built));
  if (built.firstLoadGzipBytes >= FIRST_LOAD_BUDGET_BYTES) process.exitCode = 1;
}
