import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real servers on ephemeral ports and real SQLite files: generous but bounded.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Native uWebSockets.js and better-sqlite3 are safest in child processes.
    pool: 'forks',
  },
});
