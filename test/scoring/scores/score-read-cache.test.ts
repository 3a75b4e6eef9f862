/**
 * The single-score read cache across two API processes (two contexts, each with its own
 * database connection and caches, sharing the database, and Redis where configured): a score
 * changed through one is never answered stale by the other once the change is acknowledged.
 * Without Redis, SQLite processes see each other's commits in the database file and PostgreSQL
 * ones hear them through LISTEN/NOTIFY.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createAppContext } from '../../../src/app/container.js';
import { defaultPeerTimings, type PeerTimings } from '../../../src/events/bus-peers.js';
import { loadConfig } from '../../../src/config/index.js';
import { buildServer } from '../../../src/app/server.js';
import { issueCredential } from '../../../src/scoring/stamps/dev-issuer.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { type DatabaseKind, databaseKinds } from '../../helpers/databases.js';

const redisUrl = inject('redisUrl');
const PROVIDERS = ['Google', 'Linkedin', 'Discord', 'SelfStakingBronze', 'TrustedCitizen'];
const setups = [
  ...(redisUrl ? databaseKinds.map((kind) => ({ kind, bus: 'Redis', redis: { REDIS_URL: redisUrl } })) : []),
  ...databaseKinds.map((kind) => ({ kind, bus: kind === 'sqlite' ? 'the database file' : 'LISTEN/NOTIFY', redis: {} })),
];

/** Both answer from memory for ten minutes: only the announcements keep them right. */
function environment(redis: Record<string, string>): Record<string, string> {
  return { ...redis, SCORE_CACHE_TTL_MS: '600000', SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '25' };
}


async function secondProcess(first: TestApp, env: Record<string, string>, busPeers: PeerTimings) {
  const config = loadConfig({ ...env, STAMPGATE_ENV: 'development', DATABASE_URL: first.test.url, DATA_DIR: first.ctx.config.dataDir });
  const ctx = await createAppContext(config, first.test.open(), { http: true, busPeers });
  await ctx.signals.listen();
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

/** A (API and the only scoring worker) and B (a pure API process) on one database, both listening for notices. */
async function twoProcesses(kind: DatabaseKind, env: Record<string, string>, cleanups: (() => Promise<void>)[], busPeers: PeerTimings) {
  const a = await createTestApp(kind, env, { busPeers });
  cleanups.push(a.close);
  await a.ctx.signals.listen();
  const b = await secondProcess(a, env, busPeers);
  cleanups.push(b.close);
  a.ctx.worker.start();
  cleanups.push(() => a.ctx.worker.stop());
  const { scorer, key } = await seedAccount(a.ctx, { tier: 4 });
  // Each answers from memory once it hears the others (on PostgreSQL: once its first ping came back).
  const deadline = Date.now() + 10_000;
  while (a.ctx.bus.generation() === null || b.ctx.bus.generation() === null) {
    if (Date.now() > deadline) throw new Error('the processes never heard each other');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { a, b, scorer, key };
}

describe.each(setups)('score read cache across two processes on $kind, changes heard through $bus', ({ kind, redis }) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const env = environment(redis);

  it('never answers the old score from the other process after a submission through one is acknowledged', async () => {
    // The production timings: a busy test process must not lapse a lease.
    const { a, b, scorer, key } = await twoProcesses(kind, env, cleanups, defaultPeerTimings);
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
      // The second reads came from memory: both processes hold the record.
      expect(a.ctx.scoreReadCache.size).toBe(1);
      expect(b.ctx.scoreReadCache.size).toBe(1);
    }
  }, 60_000);
});

describe.each(databaseKinds.filter((kind) => kind === 'postgres'))('score read cache on %s while LISTEN/NOTIFY is down', (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const env = environment({});

  it('reads the database while it cannot hear the other process, and empties itself when it can again', async () => {
    // A short lease: A, deaf too, waits one after each write, less than B's first reconnection delay.
    const { a, b, scorer, key } = await twoProcesses(kind, env, cleanups, { pingMs: 20, leaseMs: 150 });
    const address = `0x${'6d'.repeat(20)}`;
    const readB = await listen(b.app);
    const path = `/registry/score/${scorer.id}/${address}`;
    const addStamp = async (provider: string) => {
      const credential = issueCredential({ privateKey: a.ctx.devIssuerKey!, address, provider, expiresAt: new Date(Date.now() + 86_400_000) });
      expect((await a.ctx.stamps.importCredentials([credential])).results.map((r) => r.status)).toEqual(['stored']);
    };
    const waitFor = async (done: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await waitFor(() => b.ctx.bus.generation() !== null);
    await addStamp('Google');
    const first = await a.ctx.scores.submit(scorer.id, address);
    expect((await readB(path, key)).body.score).toBe(first.score);
    expect(b.ctx.scoreReadCache.size).toBe(1);

    // Every LISTEN connection of the database is cut: B can no longer hear A's writes.
    const admin = a.test.open();
    cleanups.push(() => admin.close());
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and query like 'listen %'`.execute(admin.db);
    await waitFor(() => b.ctx.bus.generation() === null);
    await addStamp('Linkedin');
    const second = await a.ctx.scores.submit(scorer.id, address);
    expect(second.score).not.toBe(first.score);
    for (let i = 0; i < 2; i++) expect((await readB(path, key)).body.score).toBe(second.score);
    expect(b.ctx.scoreReadCache.size).toBe(0);

    // Back: B caches again.
    await waitFor(() => b.ctx.bus.generation() !== null);
    expect((await readB(path, key)).body.score).toBe(second.score);
    expect(b.ctx.scoreReadCache.size).toBe(1);
  }, 60_000);
});
