import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Test layers (test/README.md). A test file's layer is the word before `.test.ts` in its name:
 * `codecs.unit.test.ts` is a unit test. Each layer's global setup installs and starts only what
 * that layer runs, so `npm run test:unit` needs nothing but `npm install`.
 */
/**
 * Files of the embedded, scale-out and browser layers (one group) running at once: one per core.
 * vitest's default for forks is one fewer than the cores, which on the 2-core machines ran them
 * one at a time (437 s of the 1,114 s of `npm test` on 2026-11-29); most of their time is waiting
 * on a server or an engine, not CPU.
 */
const GROUP_1_WORKERS = Math.max(2, os.availableParallelism());

const LAYERS = {
  /**
   * In-process: our modules, SQLite in a temporary directory, no server of ours, no setup. Threads
   * sharing one module graph, one per core: the layer is the edit-test loop, and a process and a
   * fresh module graph per file cost more than most of its files' tests (78 s against 30 s for
   * 61 files on 2 cores, 2026-11-28). A unit test therefore restores what it changes (timers, spies).
   */
  // Its own group, first (group 0; a negative order silently finds no files): vitest runs a
  // group's projects together, and they must agree on maxWorkers.
  unit: { globalSetup: [], pool: 'threads', isolate: false, maxWorkers: os.availableParallelism(), sequence: { groupOrder: 0 } },
  /** The real gateway (or admin server, or main.ts as a child) on ephemeral ports, embedded mode. */
  embedded: { globalSetup: ['test/setup/console-build.ts', 'test/setup/docs-tools.ts'], maxWorkers: GROUP_1_WORKERS },
  /** Real Redis, Kafka and ClickHouse, the deploy/ pieces around them (nginx edge, promtool), and the topic's foreign readers (protoc, Python). */
  'scale-out': { globalSetup: ['test/setup/services.ts', 'test/setup/nginx.ts', 'test/setup/promtool.ts', 'test/setup/foreign-consumers.ts'], maxWorkers: GROUP_1_WORKERS },
  /** Stop and restart the shared services: one file at a time, after every other layer. */
  faults: { globalSetup: ['test/setup/services.ts'], fileParallelism: false, sequence: { groupOrder: 2 } },
  /** The operators' console in Debian's Chromium. */
  browser: { globalSetup: ['test/setup/console-build.ts', 'test/setup/chromium.ts'], maxWorkers: GROUP_1_WORKERS },
  /**
   * Every engine with TLS and authentication (SERVICES_PROFILE=secure: a private CA, Redis and a
   * Sentinel over TLS with ACL users, ClickHouse over HTTPS with least-privilege users, Kafka
   * SASL_SSL with SCRAM and ACLs), our listeners over HTTPS, generated clients (zeep, node-soap).
   * One file at a time: each starts processes of its own.
   */
  secure: {
    globalSetup: ['test/setup/secure.ts'],
    fileParallelism: false,
    // The refusal cases run concurrently, each a process doing TLS handshakes: three at a time.
    maxConcurrency: 3,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    sequence: { groupOrder: 2 },
  },
  /**
   * The engines in their HA forms (SERVICES_PROFILE=ha: Redis primary + replica + Sentinels, three
   * Kafka brokers; ClickHouse is the single profile's), one node killed at a time: alone, last. A
   * test is one to two minutes on a 2-core box; every wait inside has its own bound.
   */
  ha: {
    globalSetup: ['test/setup/services.ts', 'test/ha/setup.ts'],
    // One file at a time: both files' gateways write through the three brokers, so a broker the
    // Kafka file kills shows in the Redis file's -5 figures (side by side, 2026-11-29: 117 s
    // instead of 167 s, but the Redis cases' -5 time went from 3-4 s to 6-14 s).
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 180_000,
    sequence: { groupOrder: 3 },
  },
  /**
   * Redis Cluster (SERVICES_PROFILE=cluster: 3 primaries + 3 replicas, beside the single profile's
   * Kafka and ClickHouse): the stores held to their contract on it, and a shard's primary killed,
   * frozen or a slot moved under ingest, one at a time on one cluster restored between cases:
   * alone, last.
   */
  cluster: {
    globalSetup: ['test/setup/services.ts', 'test/cluster/setup.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 180_000,
    sequence: { groupOrder: 4 },
  },
} satisfies Record<string, Omit<TestProjectInlineConfiguration['test'] & object, 'name' | 'include'>>;

type Layer = keyof typeof LAYERS;

/** A test file that names no layer would silently never run: refuse to start instead. */
function checkEveryFileHasALayer(): void {
  const pattern = new RegExp(`\\.(${Object.keys(LAYERS).join('|')})\\.test\\.ts$`);
  const files = fs.readdirSync(path.join(import.meta.dirname, 'test'), { recursive: true, encoding: 'utf8' });
  const unlayered = files.filter((f) => f.endsWith('.test.ts') && !pattern.test(f));
  if (unlayered.length > 0) {
    throw new Error(
      `test files without a layer (name them <name>.<${Object.keys(LAYERS).join('|')}>.test.ts, see test/README.md): ${unlayered.map((f) => `test/${f}`).join(', ')}`,
    );
  }
}
checkEveryFileHasALayer();

export default defineConfig({
  test: {
    // Real servers on ephemeral ports, real databases: generous but bounded.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Native uWebSockets.js and better-sqlite3 are safest in child processes.
    pool: 'forks',
    projects: (Object.keys(LAYERS) as Layer[]).map((name) => ({
      extends: true,
      test: { name, include: [`test/**/*.${name}.test.ts`], sequence: { groupOrder: 1 }, ...LAYERS[name] },
    })),
  },
});
