import { defineConfig } from 'vitest/config';

/**
 * Two groups: everything in parallel first, then the fault-injection suites one file at a time
 * (they stop and restart the shared Redis, Kafka and ClickHouse, so nothing else may run).
 */
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts', 'test/console-build-setup.ts'],
    // Real servers on ephemeral ports, real databases: generous but bounded.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Native uWebSockets.js and better-sqlite3 are safest in child processes.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: ['test/faults/**'], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'faults', include: ['test/faults/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
