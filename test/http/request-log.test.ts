import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config.js';
import { createLogger, redactUrl } from '../../src/logger.js';
import { buildServer } from '../../src/server.js';
import { databaseKinds, openMigratedTestDatabase } from '../helpers/databases.js';

describe('redactUrl', () => {
  it('hides export credentials and keeps every other parameter', () => {
    expect(redactUrl('/api/v0.1/grants/contributors_addresses/7?_key=abc&_secret=s3cr3t&x=1')).toBe(
      '/api/v0.1/grants/contributors_addresses/7?_key=[redacted]&_secret=[redacted]&x=1',
    );
    expect(redactUrl('/x?_SECRET=a#frag')).toBe('/x?_SECRET=[redacted]#frag');
    expect(redactUrl('/registry/score/1?limit=5')).toBe('/registry/score/1?limit=5');
    // Spelled as the query parser would still read them.
    expect(redactUrl('/x?%5Fsecret=a&%5f%73ecret=b&_secret&y=_secret')).toBe('/x?%5Fsecret=[redacted]&%5f%73ecret=[redacted]&_secret=[redacted]&y=_secret');
    expect(redactUrl('/x?a=1&%E0%A4=2')).toBe('/x?a=1&%E0%A4=2');
  });
});

describe.each(databaseKinds)('request logs (%s)', (kind) => {
  it('never contain an export secret sent in the query string', async () => {
    const { test, database } = await openMigratedTestDatabase(kind);
    const dataDir = mkdtempSync(join(tmpdir(), 'stampgate-log-'));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: test.url, LOG_LEVEL: 'info' });
    const ctx = await createAppContext(config, database, { http: true });
    const app = await buildServer(ctx, { logger: createLogger('info', sink) });
    try {
      const res = await app.inject('/api/v0.1/grants/contributors_addresses/1?_key=k1&_secret=very-secret-value');
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      const log = lines.join('');
      expect(log).toContain('_secret=[redacted]');
      expect(log).not.toContain('very-secret-value');
    } finally {
      await app.close();
      await ctx.close();
      await test.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
