import { afterEach, describe, expect, inject, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/app/server.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/databases.js';

const redisUrl = inject('redisUrl');
const redisKinds = redisUrl ? databaseKinds : [];
const address = '0x' + 'ef'.repeat(20);

/** A second API process on the same database and Redis (its own connections and key cache). */
async function secondProcess(first: TestApp, env: Record<string, string>) {
  const config = loadConfig({ ...env, STAMPGATE_ENV: 'development', DATABASE_URL: first.test.url, DATA_DIR: first.ctx.config.dataDir });
  const ctx = await createAppContext(config, first.test.open(), { http: true });
  const app = await buildServer(ctx, { logger: false });
  await app.ready();
  return { app, ctx, close: async () => (await app.close(), await ctx.close()) };
}

/** Repeats `request` until its status differs from `from` (the bus delivers asynchronously), at most ~1 s. */
async function statusAfterChange(request: () => Promise<number>, from: number): Promise<number> {
  let status = await request();
  for (let i = 0; i < 50 && status === from; i++) {
    await new Promise((r) => setTimeout(r, 20));
    status = await request();
  }
  return status;
}

describe.each(redisKinds)('key permission changes across processes on %s', (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('an edit in one process holds in another from its next requests, despite a ten-minute key cache', async () => {
    const env = { REDIS_URL: redisUrl!, API_KEY_CACHE_TTL_MS: '600000' };
    const a = await createTestApp(kind, env);
    cleanups.push(a.close);
    const b = await secondProcess(a, env);
    cleanups.push(b.close);
    const { key, apiKey, scorer } = await seedAccount(a.ctx, { permissions: ['read_scores'] });
    const submit = async () =>
      (await a.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': key }, payload: { address, scorer_id: String(scorer.id) } }))
        .statusCode;
    const read = async () => (await a.app.inject({ url: `/registry/score/${scorer.id}/${address}`, headers: { 'x-api-key': key } })).statusCode;
    expect(await submit()).toBe(403); // now cached in A
    await b.ctx.apiKeys.setPermissions(apiKey.prefix, ['submit_passports']);
    expect(await statusAfterChange(submit, 403)).toBe(200);
    expect(await read()).toBe(403);
  });

  it('hears `stampgate keys permissions` run as a command of its own', async () => {
    const env = { REDIS_URL: redisUrl!, API_KEY_CACHE_TTL_MS: '600000' };
    const a = await createTestApp(kind, env);
    cleanups.push(a.close);
    const { key, apiKey, scorer } = await seedAccount(a.ctx);
    const read = async () => (await a.app.inject({ url: `/registry/score/${scorer.id}/${address}`, headers: { 'x-api-key': key } })).statusCode;
    const before = await read();
    expect(before).not.toBe(403);
    const cli = await runCli(['keys', 'permissions', apiKey.prefix, '--remove', 'read_scores'], {
      ...env,
      STAMPGATE_ENV: 'development',
      DATABASE_URL: a.test.url,
      DATA_DIR: a.ctx.config.dataDir,
    });
    expect(cli.code).toBe(0);
    expect(await statusAfterChange(read, before)).toBe(403);
  });
});
