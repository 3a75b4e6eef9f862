/**
 * A database that goes away under a running server, on both dialects: requests that need it get
 * 503 `database_unavailable` with Retry-After (never a 500), a submission refused that way is not
 * recorded, readiness is down and liveness up, the log has one warning for the outage and one line
 * at its end, and the first request after the database returns succeeds.
 *
 * PostgreSQL is reached through a TCP proxy the test cuts (the shared server is never touched);
 * on SQLite another connection holds the write lock past DATABASE_QUERY_TIMEOUT_MS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SqliteDatabase from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { buildServer } from '../../src/app/server.js';
import { seedAccount } from '../helpers/app.js';
import { createTestDatabase, databaseKinds } from '../helpers/databases.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const address = (digit: string) => `0x${digit.repeat(40)}`;

async function outageApp(kind: 'sqlite' | 'postgres') {
  const test = await createTestDatabase(kind);
  const proxy = kind === 'postgres' ? await startTcpProxy(new URL(test.url).hostname, Number(new URL(test.url).port || 5432)) : null;
  const url = new URL(test.url);
  if (proxy) {
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
  }
  const databaseUrl = kind === 'postgres' ? url.toString() : test.url;
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
  const dataDir = mkdtempSync(join(tmpdir(), 'stampgate-outage-'));
  const config = loadConfig({
    STAMPGATE_ENV: 'development',
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    API_KEY_CACHE_TTL_MS: '0',
    SUBMIT_WAIT_MS: '2000',
    DATABASE_CONNECT_TIMEOUT_MS: '500',
    DATABASE_QUERY_TIMEOUT_MS: '300',
    RETRY_AFTER_SECONDS: '7',
  });
  const database = openDatabase(databaseUrl, { connectTimeoutMs: 500, queryTimeoutMs: 300, log: logger, poolSize: 3 });
  await migrateToLatest(database);
  const ctx = await createAppContext(config, database, { http: true, log: logger });
  const app = await buildServer(ctx, { logger });
  await app.ready();
  ctx.worker.start();
  return {
    app,
    ctx,
    test,
    proxy,
    lines,
    close: async () => {
      await app.close();
      await ctx.close();
      await proxy?.close();
      await test.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe.each(databaseKinds)('a database outage on %s', (kind) => {
  it('is answered 503 database_unavailable with Retry-After, logged once, and recovered from by itself', async () => {
    const t = await outageApp(kind);
    let lock: SqliteDatabase.Database | null = null;
    try {
      const { key, scorer } = await seedAccount(t.ctx);
      const submit = (digit: string) =>
        t.app.inject({
          method: 'POST',
          url: '/registry/submit-passport',
          headers: { 'x-api-key': key },
          payload: { address: address(digit), scorer_id: String(scorer.id) },
        });
      const readScore = (digit: string) => t.app.inject({ url: `/registry/score/${scorer.id}/${address(digit)}`, headers: { 'x-api-key': key } });
      expect((await submit('1')).json()).toMatchObject({ status: 'DONE' });

      // The outage: PostgreSQL's connections are reset and new ones refused; SQLite's write lock is held.
      if (t.proxy) await t.proxy.cut();
      else {
        lock = new SqliteDatabase(t.test.url.slice('sqlite:'.length));
        lock.exec('begin immediate');
      }
      const started = Date.now();
      const refused = await submit('2');
      expect(Date.now() - started).toBeLessThan(3000);
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({ detail: expect.any(String), code: 'database_unavailable' });
      expect(refused.headers['retry-after']).toBe('7');
      expect(refused.headers['x-request-id']).toEqual(expect.any(String));
      for (let i = 0; i < 3; i++) expect((await submit('3')).statusCode).toBe(503);
      if (t.proxy) {
        // Reads need the database too (SQLite reads are not blocked by a writer).
        const read = await readScore('1');
        expect(read.statusCode).toBe(503);
        expect(read.json().code).toBe('database_unavailable');
        expect((await t.app.inject('/health/ready')).statusCode).toBe(503);
      }
      expect((await t.app.inject('/health/live')).statusCode).toBe(200);

      // The database returns: the very first request succeeds.
      if (t.proxy) await t.proxy.restore();
      else lock?.exec('rollback');
      const after = await readScore('2');
      expect(after.statusCode).toBe(404);
      expect(after.json().code).toBe('not_submitted');
      expect((await submit('4')).json()).toMatchObject({ status: 'DONE' });
      expect((await t.app.inject('/health/ready')).statusCode).toBe(200);

      const entries = t.lines.map((line) => JSON.parse(line) as { level: number; msg: string; outageMs?: number; err?: unknown });
      if (t.proxy) {
        expect(entries.filter((e) => e.msg.startsWith('database unavailable'))).toHaveLength(1);
        const ended = entries.filter((e) => e.msg.startsWith('database available again'));
        expect(ended).toHaveLength(1);
        expect(ended[0]!.outageMs).toEqual(expect.any(Number));
      } else {
        // A lock held too long is contention, not an outage: each refusal is one info line.
        expect(entries.filter((e) => e.msg.startsWith('database unavailable'))).toHaveLength(0);
      }
      // No 500 and no stack trace per request.
      expect(entries.filter((e) => e.level >= 50)).toEqual([]);
      expect(t.lines.join('\n')).not.toContain('"stack"');
    } finally {
      lock?.close();
      await t.close();
    }
  });
});
