import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';

describe.each(databaseKinds)('GET /registry/signing-message on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  it('returns a message with a stored, fresh nonce and the rate-limit headers', async () => {
    const { key } = await seedAccount(t.ctx);
    const res = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['message', 'nonce']);
    expect(body.message).toContain(`\nNonce: ${body.nonce}`);
    const stored = await t.ctx.database.db.selectFrom('nonces').selectAll().where('nonce', '=', body.nonce).executeTakeFirst();
    expect(stored?.used_at).toBeNull();
    expect(res.headers['ratelimit-limit']).toBe('125');
    expect(res.headers['ratelimit-remaining']).toBe('124');
    expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('accepts the key as a bearer token', async () => {
    const { key } = await seedAccount(t.ctx);
    const res = await t.app.inject({ url: '/registry/signing-message', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
  });

  it.each([
    ['no key', {}, 'missing_api_key'],
    ['an unknown key', { 'x-api-key': 'abcdefgh.' + 'x'.repeat(43) }, 'invalid_api_key'],
    ['garbage', { 'x-api-key': "'; drop table api_keys; --" }, 'invalid_api_key'],
  ])('answers 401 to %s', async (_what, headers, code) => {
    const res = await t.app.inject({ url: '/registry/signing-message', headers });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: expect.any(String), code });
    expect(await t.ctx.database.db.selectFrom('nonces').selectAll().execute()).toHaveLength(0);
  });

  it('answers 401 to a revoked key', async () => {
    const { key, apiKey } = await seedAccount(t.ctx);
    await t.ctx.apiKeys.revoke(apiKey.prefix);
    const res = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('invalid_api_key');
  });

  it('gives a tier-1 key exactly 125 requests, then 429 with Retry-After; other keys are unaffected', async () => {
    const { key, account } = await seedAccount(t.ctx, { tier: 1 });
    for (let i = 1; i <= 125; i++) {
      const res = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(125 - i));
    }
    const refused = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ detail: expect.stringContaining('125'), code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(900);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(await t.ctx.database.db.selectFrom('nonces').selectAll().execute()).toHaveLength(125);

    const { key: other } = await t.ctx.apiKeys.create(account.id, { tier: 2 });
    const fresh = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': other } });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['ratelimit-limit']).toBe('350');
  });

  it('gives tiers 3 and 4 their budgets (tier 4 configurable)', async () => {
    const { account } = await seedAccount(t.ctx);
    const { key: tier3 } = await t.ctx.apiKeys.create(account.id, { tier: 3 });
    const { key: tier4 } = await t.ctx.apiKeys.create(account.id, { tier: 4 });
    const r3 = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': tier3 } });
    const r4 = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': tier4 } });
    expect(r3.headers['ratelimit-limit']).toBe('2000');
    expect(r4.headers['ratelimit-limit']).toBe('10000');
  });
});
