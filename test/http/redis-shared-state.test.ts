import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/app/server.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/databases.js';
import { bountyFixtures, importOk } from '../publicdata/fixtures.js';

const redisUrl = inject('redisUrl');
const redisKinds = redisUrl ? databaseKinds : [];

/** A second API process on the same database (its own connections, caches and rate-limit store). */
async function secondProcess(first: TestApp, env: Record<string, string>) {
  const config = loadConfig({ ...env, STAMPGATE_ENV: 'development', DATABASE_URL: first.test.url, DATA_DIR: first.ctx.config.dataDir });
  const ctx = await createAppContext(config, first.test.open(), { http: true });
  const app = await buildServer(ctx, { logger: false });
  await app.ready();
  return { app, ctx, close: async () => (await app.close(), await ctx.close()) };
}

describe.each(redisKinds)('Redis-backed shared state on %s', (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('shares a tier-1 key’s 125 requests across two API processes', async () => {
    const env = { REDIS_URL: redisUrl! };
    const a = await createTestApp(kind, env);
    cleanups.push(a.close);
    const b = await secondProcess(a, env);
    cleanups.push(b.close);
    const { key } = await seedAccount(a.ctx, { tier: 1 });
    for (let i = 0; i < 125; i++) {
      const res = await (i % 2 === 0 ? a.app : b.app).inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(200);
    }
    for (const app of [a.app, b.app]) {
      const refused = await app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
      expect(refused.statusCode).toBe(429);
      expect(refused.json().code).toBe('rate_limited');
    }
  });

  it('tells every process at once when a key is revoked elsewhere, even with a long key cache', async () => {
    const env = { REDIS_URL: redisUrl!, API_KEY_CACHE_TTL_MS: '600000' };
    const a = await createTestApp(kind, env);
    cleanups.push(a.close);
    const b = await secondProcess(a, env);
    cleanups.push(b.close);
    const { key, apiKey } = await seedAccount(a.ctx);
    expect((await a.app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } })).statusCode).toBe(200);
    await b.ctx.apiKeys.revoke(apiKey.prefix);
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await a.app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } })).statusCode;
    }
    expect(status).toBe(401);
  });

  it('hears a revocation made by a CLI command in a process of its own', async () => {
    const env = { REDIS_URL: redisUrl!, API_KEY_CACHE_TTL_MS: '600000' };
    const a = await createTestApp(kind, env);
    cleanups.push(a.close);
    const { key, apiKey } = await seedAccount(a.ctx);
    expect((await a.app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } })).statusCode).toBe(200);
    const cli = await runCli(['keys', 'revoke', apiKey.prefix], { ...env, STAMPGATE_ENV: 'development', DATABASE_URL: a.test.url, DATA_DIR: a.ctx.config.dataDir });
    expect(cli.code).toBe(0);
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await a.app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } })).statusCode;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(401);
  });

  it('drops every process’s cached public data lists when another process imports', async () => {
    const env = { REDIS_URL: redisUrl!, PUBLIC_CACHE_TTL: '3600' };
    const a = await createTestApp(kind, env);
    cleanups.push(a.close);
    const b = await secondProcess(a, env);
    cleanups.push(b.close);
    const [first, second] = bountyFixtures();
    await importOk(b.ctx, { bounties: [first] });
    const titles = async () => ((await a.app.inject('/api/v0.1/bounties/?order_by=pk')).json() as { title: string }[]).map((x) => x.title);
    expect(await titles()).toEqual([first!.title]);
    // Cached in A now; B imports another bounty (as `stampgate data import` would, in its own process).
    await importOk(b.ctx, { bounties: [second] });
    let seen = await titles();
    for (let i = 0; i < 50 && seen.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
      seen = await titles();
    }
    expect(seen).toEqual([first!.title, second!.title]);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start');
}

describe.each(redisKinds)('when Redis goes away on %s', (kind) => {
  it('keeps serving with per-process limits, warns once, and shares budgets again when Redis returns', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const base = await createTestApp(kind);
    const config = loadConfig({ STAMPGATE_ENV: 'development', DATABASE_URL: base.test.url, DATA_DIR: base.ctx.config.dataDir, REDIS_URL: `redis://127.0.0.1:${port}`, LOG_LEVEL: 'info' });
    const ctx = await createAppContext(config, base.test.open(), { http: true, log: logger });
    const app = await buildServer(ctx, { logger });
    try {
      const { key } = await seedAccount(ctx);
      const get = () => app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } });
      expect((await get()).headers['ratelimit-remaining']).toBe('124');

      redis.kill('SIGKILL');
      await new Promise((r) => redis.once('exit', r));
      const started = Date.now();
      for (let i = 0; i < 5; i++) expect((await get()).statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(lines.filter((l) => l.includes('Redis is unreachable')).length).toBe(1);

      redis = await startRedis(port);
      let recovered = false;
      for (let i = 0; i < 100 && !recovered; i++) {
        await new Promise((r) => setTimeout(r, 50));
        await get();
        recovered = lines.some((l) => l.includes('Redis is reachable again'));
      }
      expect(recovered).toBe(true);
      // Redis lost its counters with the restart, so the shared count starts again from there.
      expect(Number((await get()).headers['ratelimit-remaining'])).toBeGreaterThan(115);
    } finally {
      await app.close();
      await ctx.close();
      await base.close();
      redis.kill('SIGKILL');
    }
  });
});
