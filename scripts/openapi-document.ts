/**
 * The server's OpenAPI document, rendered without opening a listener, and the command that writes it
 * to `packages/client/openapi.json` (the document the typed client is generated from).
 *
 *   npm run openapi:dump          rewrite the committed document after changing a route
 *
 * The document is rendered from a throw-away in-memory database and a fixed configuration, so it
 * depends only on the code: the drift test (test/client/openapi-drift.test.ts) compares it with the
 * committed file and fails when a route changed without the client being regenerated.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAppContext } from '../src/app/container.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { buildServer } from '../src/app/server.js';

export const committedDocumentPath = fileURLToPath(new URL('../packages/client/openapi.json', import.meta.url));

/** `GET /openapi.json` of a server with every API enabled, as stable, pretty-printed JSON text. */
export async function renderOpenApiDocument(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stampgate-openapi-'));
  const database = openDatabase('sqlite::memory:');
  try {
    // Only the settings that decide which routes exist; nothing from the caller's environment.
    const config = loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: 'sqlite::memory:' });
    const ctx = await createAppContext(config, database);
    try {
      const app = await buildServer(ctx, { logger: false });
      try {
        await app.ready();
        const response = await app.inject({ method: 'GET', url: '/openapi.json' });
        if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`);
        return `${JSON.stringify(response.json(), null, 2)}\n`;
      } finally {
        await app.close();
      }
    } finally {
      await ctx.close();
    }
  } finally {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(committedDocumentPath, await renderOpenApiDocument());
  console.log(`wrote ${committedDocumentPath}`);
}
