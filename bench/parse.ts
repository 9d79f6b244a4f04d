/**
 * Parser benchmark, two suites:
 *   - parsers: `sax` (strict) vs `saxes` on a ~900-byte SOAP 1.1 LoginYInsertarEvento request;
 *   - readers: the SOAP binding's parse step, the saxes EnvelopeReader (with its TextDecoder) vs the
 *     byte scanner that replaced it, on that request and on a 100-event LoginYInsertarEventos
 *     batch (bench/lib/envelope-readers.ts).
 *
 *   npx tsx bench/parse.ts [--time=3] [--warmup=0.5] [--rounds=3] [--modes=plain,xmlns] [--suites=parsers,readers]
 *   taskset -c 0 npx tsx bench/parse.ts      # pin to one core
 *
 * Per message each variant does the same work: get a parser (new, or the reused one), feed the
 * envelope in two string chunks, collect the text of every parameter element of the Body's
 * operation element into a fresh object, close. Variants:
 *   - sax, new parser per message / one parser reused (sax re-initialises itself on close());
 *   - saxes, new parser per message / one parser reused (saxes re-initialises itself on close()).
 * Modes: `plain` (no namespace processing; local names are taken after the prefix) and `xmlns`
 * (namespace processing on, as a SOAP reader that matches by namespace would use).
 *
 * Before timing, every variant is checked: three consecutive messages (A, B, A) must each yield
 * exactly their own parameters, which proves that a reused parser starts clean after close().
 *
 * Throughput: messages per second of this process's CPU time (user + system) over a fixed CPU-time
 * budget after a warm-up, per round; the median of the rounds is reported (wall-clock msgs/s is
 * shown too; it drops when other processes compete for the core). Variants are interleaved within a round to spread drift (thermal, GC).
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deepStrictEqual } from 'node:assert/strict';
import sax from 'sax';
import { SaxesParser } from 'saxes';
import { readerBodies, readerVariants, type ReaderVariant } from './lib/envelope-readers.js';

// ---------------------------------------------------------------------------------------------
// Options and fixtures

function option(name: string, fallback: string): string {
  const prefix = `--${name}=`;
  const arg = process.argv.find((a) => a.startsWith(prefix));
  return arg === undefined ? fallback : arg.slice(prefix.length);
}

const TIME_S = Number(option('time', '3'));
const WARMUP_S = Number(option('warmup', '0.5'));
const ROUNDS = Number(option('rounds', '3'));
const MODES = option('modes', 'plain,xmlns').split(',') as Mode[];
const SUITES = option('suites', 'parsers,readers').split(',');

const here = dirname(fileURLToPath(import.meta.url));
const MESSAGE_A = readFileSync(join(here, 'fixtures', 'login-y-insertar-evento.soap11.xml'), 'utf8');
const MESSAGE_B = MESSAGE_A.replace('<Dominio>AB123CD</Dominio>', '<Dominio>ZZ999XY</Dominio>')
  .replace('<Latitud>-34.6037221</Latitud>', '<Latitud>-31.4201</Latitud>')
  .replace('<Codigo>01</Codigo>', '<Codigo>77</Codigo>');

const EXPECTED_A: Params = {
  SystemUser: 'prestador01',
  Password: 's3cr3t&pass',
  Dominio: 'AB123CD',
  NroSerie: '860123456789012',
  Codigo: '01',
  Latitud: '-34.6037221',
  Longitud: '-58.3815704',
  Altitud: '25.5',
  Velocidad: '62.3',
  FechaHoraEvento: '2026-03-14T15:09:26.535-03:00',
  FechaHoraRecepcion: '2026-03-14T15:09:27.1691795-03:00',
};
const EXPECTED_B: Params = { ...EXPECTED_A, Dominio: 'ZZ999XY', Latitud: '-31.4201', Codigo: '77' };

/** A message split in two chunks, to exercise the streaming path of each parser. */
type Chunks = readonly [string, string];

function split(message: string): Chunks {
  const mid = message.length >> 1;
  return [message.slice(0, mid), message.slice(mid)];
}

const CHUNKS_A = split(MESSAGE_A);
const CHUNKS_B = split(MESSAGE_B);

// ---------------------------------------------------------------------------------------------
// The common collection logic: the same state machine behind both parsers.

type Params = Record<string, string>;
type Mode = 'plain' | 'xmlns';

/** Depth of the parameter elements: Envelope = 1, Body = 2, operation = 3, parameters = 4. */
const PARAM_DEPTH = 4;

class Collector {
  depth = 0;
  inBody = false;
  capturing = false;
  current = '';
  text = '';
  params: Params = {};

  reset(): void {
    this.depth = 0;
    this.inBody = false;
    this.capturing = false;
    this.current = '';
    this.text = '';
    this.params = {};
  }

  open(local: string): void {
    this.depth++;
    if (this.depth === 2) this.inBody = local === 'Body';
    else if (this.depth === PARAM_DEPTH && this.inBody) {
      this.capturing = true;
      this.current = local;
      this.text = '';
    }
  }

  onText(t: string): void {
    if (this.capturing) this.text += t;
  }

  close(): void {
    if (this.capturing && this.depth === PARAM_DEPTH) {
      this.params[this.current] = this.text;
      this.capturing = false;
    }
    this.depth--;
  }
}

function localOf(qname: string): string {
  const i = qname.indexOf(':');
  return i < 0 ? qname : qname.slice(i + 1);
}

/** Parses one message and returns its parameters. */
type ParseFn = (chunks: Chunks) => Params;

// ---------------------------------------------------------------------------------------------
// sax

function wireSax(parser: sax.SAXParser, c: Collector, mode: Mode): void {
  parser.onopentag =
    mode === 'xmlns'
      ? (tag) => c.open((tag as sax.QualifiedTag).local)
      : (tag) => c.open(localOf(tag.name));
  parser.ontext = (t) => c.onText(t);
  parser.onclosetag = () => c.close();
  parser.onerror = (e) => {
    throw e;
  };
}

function saxNewPerMessage(mode: Mode): ParseFn {
  const c = new Collector();
  return (chunks) => {
    c.reset();
    const parser = sax.parser(true, { xmlns: mode === 'xmlns' });
    wireSax(parser, c, mode);
    parser.write(chunks[0]).write(chunks[1]).close();
    return c.params;
  };
}

function saxReused(mode: Mode): ParseFn {
  const c = new Collector();
  const parser = sax.parser(true, { xmlns: mode === 'xmlns' });
  wireSax(parser, c, mode);
  return (chunks) => {
    c.reset();
    parser.write(chunks[0]).write(chunks[1]).close();
    return c.params;
  };
}

// ---------------------------------------------------------------------------------------------
// saxes

function makeSaxes(c: Collector, mode: Mode): { write(s: string): unknown; close(): unknown } {
  if (mode === 'xmlns') {
    const p = new SaxesParser({ xmlns: true });
    p.on('opentag', (tag) => c.open(tag.local));
    p.on('text', (t) => c.onText(t));
    p.on('closetag', () => c.close());
    return p;
  }
  const p = new SaxesParser({ xmlns: false });
  p.on('opentag', (tag) => c.open(localOf(tag.name)));
  p.on('text', (t) => c.onText(t));
  p.on('closetag', () => c.close());
  return p;
}

function saxesNewPerMessage(mode: Mode): ParseFn {
  const c = new Collector();
  return (chunks) => {
    c.reset();
    const parser = makeSaxes(c, mode);
    parser.write(chunks[0]);
    parser.write(chunks[1]);
    parser.close();
    return c.params;
  };
}

function saxesReused(mode: Mode): ParseFn {
  const c = new Collector();
  const parser = makeSaxes(c, mode);
  return (chunks) => {
    c.reset();
    parser.write(chunks[0]);
    parser.write(chunks[1]);
    parser.close();
    return c.params;
  };
}

// ---------------------------------------------------------------------------------------------
// Harness

interface Variant {
  readonly parser: 'sax' | 'saxes';
  readonly reuse: boolean;
  readonly mode: Mode;
  readonly parse: ParseFn;
  readonly samples: Rate[];
}

function label(v: Variant): string {
  return `${v.mode}, ${v.reuse ? 'one parser reused' : 'new parser per message'}`;
}

/** A, B, A through the same function: each result must be exactly its own message's values. */
function verify(v: Variant): void {
  const results = [v.parse(CHUNKS_A), v.parse(CHUNKS_B), v.parse(CHUNKS_A)];
  deepStrictEqual(results[0], EXPECTED_A, `${v.parser} ${label(v)}: message 1`);
  deepStrictEqual(results[1], EXPECTED_B, `${v.parser} ${label(v)}: message 2`);
  deepStrictEqual(results[2], EXPECTED_A, `${v.parser} ${label(v)}: message 3`);
}

let sink = 0;

interface Rate {
  /** Messages per second of this process's CPU time (user + system): robust to other load. */
  readonly cpu: number;
  /** Messages per second of wall-clock time. */
  readonly wall: number;
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * Runs `parse` until this process has used `seconds` of CPU time, alternating the two messages.
 * The budget is CPU time, not wall time, so that other processes on the machine do not shrink it.
 */
function run(parse: ParseFn, seconds: number): Rate {
  const wallStart = process.hrtime.bigint();
  const cpuStart = cpuSeconds();
  let n = 0;
  let cpu: number;
  for (;;) {
    for (let i = 0; i < 256; i++) {
      const p = parse((n + i) & 1 ? CHUNKS_B : CHUNKS_A);
      sink += p['Dominio']?.length ?? 0;
    }
    n += 256;
    cpu = cpuSeconds() - cpuStart;
    if (cpu >= seconds) break;
  }
  const wall = Number(process.hrtime.bigint() - wallStart) / 1e9;
  return { cpu: n / cpu, wall: n / wall };
}

/** Like `run`, for one envelope reader on its body. */
function runReader(v: ReaderVariant, seconds: number): Rate {
  const wallStart = process.hrtime.bigint();
  const cpuStart = cpuSeconds();
  let n = 0;
  let cpu: number;
  for (;;) {
    for (let i = 0; i < 16; i++) sink += v.read(v.body.chunks).operation?.children.length ?? 0;
    n += 16;
    cpu = cpuSeconds() - cpuStart;
    if (cpu >= seconds) break;
  }
  const wall = Number(process.hrtime.bigint() - wallStart) / 1e9;
  return { cpu: n / cpu, wall: n / wall };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function fmtLoad(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

const loadAtStart = fmtLoad();

function parsers(): void {
  const variants: Variant[] = [];
  for (const mode of MODES) {
    variants.push(
      { parser: 'sax', reuse: false, mode, parse: saxNewPerMessage(mode), samples: [] },
      { parser: 'sax', reuse: true, mode, parse: saxReused(mode), samples: [] },
      { parser: 'saxes', reuse: false, mode, parse: saxesNewPerMessage(mode), samples: [] },
      { parser: 'saxes', reuse: true, mode, parse: saxesReused(mode), samples: [] },
    );
  }
  for (const v of variants) verify(v);
  console.log(`fixture: ${Buffer.byteLength(MESSAGE_A)} bytes, two chunks per message`);
  console.log('verified: every variant returns the right parameters for consecutive messages A, B, A (reuse is clean)\n');

  for (let r = 0; r < ROUNDS; r++) {
    for (const v of variants) {
      run(v.parse, WARMUP_S);
      v.samples.push(run(v.parse, TIME_S));
    }
    process.stderr.write(`parsers: round ${r + 1}/${ROUNDS} done\n`);
  }

  console.log('| parser | mode | msgs/s per CPU-second (median) | rounds | ratio vs sax | msgs/s wall-clock (median) |');
  console.log('|---|---|---:|---|---:|---:|');
  for (const mode of MODES) {
    const base = variants.find((v) => v.mode === mode && v.parser === 'sax' && !v.reuse);
    const baseline = base ? median(base.samples.map((x) => x.cpu)) : NaN;
    for (const v of variants.filter((x) => x.mode === mode)) {
      const cpu = v.samples.map((x) => x.cpu);
      const m = median(cpu);
      console.log(
        `| ${v.parser} | ${label(v)} | ${fmt(m)} | ${cpu.map(fmt).join(' / ')} | ${(m / baseline).toFixed(2)}x | ${fmt(median(v.samples.map((x) => x.wall)))} |`,
      );
    }
  }
  console.log('\nratio: against sax with a new parser per message, same mode.\n');
}

function readers(): void {
  const variants = readerVariants(readerBodies(Buffer.from(MESSAGE_A)));
  console.log('verified: for each body the scanner returns the same SoapEnvelope as the saxes reader, twice in a row\n');
  const samples = new Map<ReaderVariant, Rate[]>(variants.map((v) => [v, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of variants) {
      runReader(v, WARMUP_S);
      samples.get(v)!.push(runReader(v, TIME_S));
    }
    process.stderr.write(`readers: round ${r + 1}/${ROUNDS} done\n`);
  }
  console.log('| body | reader | envelopes/s per CPU-second (median) | rounds | MB/s per CPU-second | ratio vs saxes | envelopes/s wall-clock (median) |');
  console.log('|---|---|---:|---|---:|---:|---:|');
  for (const v of variants) {
    const cpu = samples.get(v)!.map((x) => x.cpu);
    const m = median(cpu);
    const base = variants.find((x) => x.body === v.body && x.reader === 'saxes')!;
    const baseline = median(samples.get(base)!.map((x) => x.cpu));
    const label = v.reader === 'saxes' ? 'saxes EnvelopeReader + TextDecoder' : 'EnvelopeScanner (UTF-8 bytes)';
    console.log(
      `| ${v.body.name} | ${label} | ${fmt(m)} | ${cpu.map(fmt).join(' / ')} | ${((m * v.body.bytes) / 1e6).toFixed(1)} | ${(m / baseline).toFixed(2)}x | ${fmt(median(samples.get(v)!.map((x) => x.wall)))} |`,
    );
  }
  console.log('');
}

function main(): void {
  console.log(`node ${process.version}; ${ROUNDS} rounds x (${WARMUP_S} s warm-up + ${TIME_S} s of CPU time); median reported\n`);
  if (SUITES.includes('parsers')) parsers();
  if (SUITES.includes('readers')) readers();
  console.log(`(checksum ${sink}) load average at start ${loadAtStart}, at end ${fmtLoad()} (other processes on the machine add noise)`);
}

main();
