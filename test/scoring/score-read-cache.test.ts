/**
 * The single-score read cache across two API processes (two contexts, each with its own
 * database connection and caches, sharing the database and Redis): a score changed through
 * one is never answered stale by the other once the change is acknowledged.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/server.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const redisUrl = inject('redisUrl');
const redisKinds = redisUrl ? databaseKinds : [];
const PROVIDERS = ['Google', 'Linkedin', 'Discord', 'SelfStakingBronze', 'TrustedCitizen'];

describe.each(redisKinds)('score read cache across two processes on %s', (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  // Both answer from memory for ten minutes: only the announcements keep them right.
  const env = { REDIS_URL: redisUrl!, SCORE_CACHE_TTL_MS: '600000', SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '25' };

  async function secondProcess(first: TestApp) {
    const config = loadConfig({ ...env, STAMPGATE_ENV: 'development', DATABASE_URL: first.test.url, DATA_DIR: first.ctx.config.dataDir });
    const ctx = await createAppContext(config, first.test.open(), { http: true });
    const app = await buildServer(ctx, { logger: false });
    return { app, ctx, close: async () => (await app.close(), await ctx.close()) };
  }

  /** Reads over real HTTP, so the request reaches the process the way a client's does (after the acknowledgement). */
  async function listen(app: FastifyInstance): Promise<(path: string, key: string) => Promise<{ status: number; body: { score: string; status: string } }>> {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    return async (path, key) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-api-key': key } });
      return { status: res.status, body: (await res.json()) as { score: string; status: string } };
    };
  }

  it('never answers the old score from the other process after a submission through one is acknowledged', async () => {
    const a = await createTestApp(kind, env);
    cleanups.push(a.close);
    const b = await secondProcess(a);
    cleanups.push(b.close);
    // Only A scores (its worker); B is a pure API process.
    a.ctx.worker.start();
    cleanups.push(() => a.ctx.worker.stop());
    const { scorer, key } = await seedAccount(a.ctx, { tier: 4 });
    const address = `0x${'5c'.repeat(20)}`;
    const readA = await listen(a.app);
    const readB = await listen(b.app);
    const path = `/registry/score/${scorer.id}/${address}`;

    let previous: string | null = null;
    for (let round = 0; round < PROVIDERS.length; round++) {
      if (round > 0) {
        const credential = issueCredential({ privateKey: a.ctx.devIssuerKey!, address, provider: PROVIDERS[round - 1]!, expiresAt: new Date(Date.now() + 86_400_000) });
        const report = await a.ctx.stamps.importCredentials([credential]);
        expect(report.results.map((r) => r.status)).toEqual(['stored']);
      }
      // Submissions alternate between the processes; the answer is the acknowledgement.
      const acknowledged = round % 2 === 0 ? await a.ctx.scores.submit(scorer.id, address) : await b.ctx.scores.submit(scorer.id, address);
      expect(acknowledged.status).toBe('DONE');
      expect(acknowledged.score).not.toBe(previous);
      previous = acknowledged.score;
      // Both processes answer the new score at once, twice (the second from memory).
      for (const read of [readB, readA, readB, readA]) {
        const res = await read(path, key);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ status: 'DONE', score: acknowledged.score });
      }
    }
  }, 60_000);
});
