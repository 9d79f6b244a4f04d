import { defineConfig } from 'vitest/config';

/**
 * Three groups: everything in parallel first, then the fault-injection suites one file at a time
 * (they stop and restart the shared Redis, Kafka and ClickHouse, so nothing else may run), then the
 * HA suites one file at a time on the HA profile's own engines.
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
      {
        // The engines in their HA forms (SERVICES_PROFILE=ha), one node killed at a time: alone, last.
        test: {
          name: 'ha',
          include: ['test/ha/**/*.test.ts'],
          globalSetup: ['test/ha/setup.ts'],
          pool: 'forks',
          fileParallelism: false,
          // A test is ~1-2 minutes on a shared 2-core box; every wait inside has its own bound.
          testTimeout: 300_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
