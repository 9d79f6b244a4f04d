/** `npm run bench`'s knobs (environment variables) and the constants every part shares. */

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Seconds of each measured run. */
export const DURATION = positiveInt('DURATION', 10);
/** wrk connections (50, as in the reference table of LOG.md). */
export const CONNECTIONS = positiveInt('CONNECTIONS', 50);
/** Seconds of the wrk warm-up run on each fresh server before its measured run. */
export const WARMUP = positiveInt('WARMUP', 3);
export const WRK = process.env.WRK ?? 'wrk';
/** Back-to-back runs of the evenly paced 70% row; the reported one has the median p99. */
export const PACED_RUNS = positiveInt('PACED_RUNS', 5);
/** CXF's JIT warm-up: CXF_WARMUP seconds of load in slices of CXF_SLICE seconds, each reported. */
export const CXF_WARMUP = positiveInt('CXF_WARMUP', 90);
export const CXF_SLICE = positiveInt('CXF_SLICE', 10);

/** NEIGHBOUR=0 leaves out the rows measured again beside a CPU-bound neighbour. */
export const NEIGHBOUR = process.env.NEIGHBOUR !== '0';

export const PEER_NAMES = ['gsoap', 'cxf', 'node-soap'] as const;
export type PeerName = (typeof PEER_NAMES)[number];

/** BENCH_PEERS=gsoap,cxf,node-soap (the default: all of them); `none` for none. */
export const PEERS: ReadonlySet<PeerName> = (() => {
  const raw = process.env.BENCH_PEERS;
  if (raw === undefined || raw.trim() === '') return new Set(PEER_NAMES);
  if (raw.trim() === 'none') return new Set<PeerName>();
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!(PEER_NAMES as readonly string[]).includes(n)) throw new Error(`BENCH_PEERS: unknown peer ${JSON.stringify(n)} (known: ${PEER_NAMES.join(', ')}, or none)`);
  }
  return new Set(names as PeerName[]);
})();

/** The provider every server knows; the same constants are in bench/wrk/common.lua. */
export const USER = 'bench';
export const PASSWORD = 'bench-secret';
export const NS = 'http://tempuri.org/';

export const log = (msg: string): void => {
  process.stderr.write(`[compare ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};
