/**
 * A request that costs n rate-limit units answers with the budget left after all n
 * (decisions.md, "Units"), on the per-process counter and on Redis; so does a synchronous batch
 * refused because its units do not fit, and the next request carries on from there.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const redisUrl = inject('redisUrl');
const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const addresses = (count: number, from = 1) => Array.from({ length: count }, (_, i) => addressNo(from + i));

const stores: [string, Record<string, string>][] = [['the per-process counter', {}]];
if (redisUrl) stores.push(['Redis', { REDIS_URL: redisUrl }]);

describe.each(databaseKinds)('RateLimit-Remaining of a multi-unit request on %s', (kind) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.each(stores)('is the budget after every unit, with %s', async (_name, env) => {
    t = await createTestApp(kind, env);
    const { key, scorer, apiKey } = await seedAccount(t.ctx, { tier: 1 });
    const app = t.app;
    const batch = (count: number, from = 1) =>
      app.inject({ method: 'POST', url: `/v2/stamps/${scorer.id}/scores`, headers: { 'x-api-key': key }, payload: { addresses: addresses(count, from) } });
    const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['ratelimit-remaining']);

    const hundred = await batch(100);
    expect(hundred.statusCode, hundred.body).toBe(200);
    expect(hundred.json().items).toHaveLength(100);
    expect(hundred.headers['ratelimit-limit']).toBe('125');
    expect(remaining(hundred)).toBe(25);
    expect(Number(hundred.headers['ratelimit-reset'])).toBeGreaterThan(0);

    const next = await app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
    expect(next.statusCode).toBe(200);
    expect(remaining(next)).toBe(24);

    const three = await batch(3, 200);
    expect(three.statusCode).toBe(200);
    expect(remaining(three)).toBe(21);

    // 30 units do not fit in 21: refused, with only the request's own unit spent (as every refused request's).
    const tooMany = await batch(30, 300);
    expect(tooMany.statusCode).toBe(429);
    expect(tooMany.json()).toEqual({ detail: expect.any(String), code: 'rate_limited' });
    expect(remaining(tooMany)).toBe(20);
    expect(Number(tooMany.headers['retry-after'])).toBeGreaterThan(0);
    const after = await app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
    expect(remaining(after)).toBe(19);

    if (env.REDIS_URL) {
      // Counted in Redis, not in this process.
      const redis = new Redis(env.REDIS_URL, { lazyConnect: true });
      await redis.connect();
      try {
        expect(await redis.get(`stampgate:ratelimit:key:${apiKey.prefix}`)).toBe('106');
      } finally {
        redis.disconnect();
      }
    }
  });
});
