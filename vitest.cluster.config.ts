import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the multi-process test (several `stampgate` OS processes on one
 * PostgreSQL database and one Redis). It manages its own throw-away database, so it needs no
 * global set-up; it is slow by nature, hence the generous time limits.
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    // Limits for a stuck run, far above the usual durations (see the timings the test prints).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    teardownTimeout: 60_000,
    // The cluster test skips itself unless it runs under this configuration (`npm test` would
    // otherwise pick it up through test/**/*.test.ts).
    env: { STAMPGATE_CLUSTER_TEST: '1' },
  },
});
