import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The developer portal's front end: Preact + TypeScript, built into dist/portal-ui (served by
 * the server at /portal). No inline scripts (the page's CSP forbids them), no external origins.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/portal/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: process.env.PORTAL_OUT_DIR ?? fileURLToPath(new URL('../dist/portal-ui', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
  },
  logLevel: 'warn',
});
