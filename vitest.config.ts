import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests use the client by its package name, from its source (no build needed between edits).
  resolve: { alias: { '@stampgate/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    // `npm run test:cluster` runs these: several OS processes, their own configuration.
    exclude: ['test/cluster/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
