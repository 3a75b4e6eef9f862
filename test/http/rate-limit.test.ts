/**
 * The API-key budget (src/http/rate-limit.ts, its hook with the resilient store): the
 * draft-spec headers on every answer, the 429's headers and wording, one count per request.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { durationText } from '../../src/http/rate-limit.js';

describe.each(databaseKinds)('the API-key budget on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  it('answers the 126th request of a tier-1 key with 429, its headers and the whole detail', async () => {
    const { key } = await seedAccount(t.ctx, { tier: 1 });
    const headers = { 'x-api-key': key };
    for (let i = 1; i <= 125; i++) expect((await t.app.inject({ url: '/registry/signing-message', headers })).statusCode).toBe(200);
    const refused = await t.app.inject({ url: '/registry/signing-message', headers });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ detail: 'Rate limit of 125 requests per 15 minutes exceeded; retry in 15 minutes.', code: 'rate_limited' });
    expect(Object.keys(refused.headers).filter((name) => name.startsWith('ratelimit-') || name === 'retry-after')).toEqual([
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'retry-after',
    ]);
    expect(refused.headers['ratelimit-limit']).toBe('125');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['retry-after']).toBe(refused.headers['ratelimit-reset']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(890);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(900);
  }, 60_000);

  it('counts a HEAD request once, like a GET', async () => {
    const { key } = await seedAccount(t.ctx, { tier: 1 });
    const headers = { 'x-api-key': key };
    const remaining = async (method: 'GET' | 'HEAD') => (await t.app.inject({ method, url: '/registry/signing-message', headers })).headers['ratelimit-remaining'];
    expect(await remaining('GET')).toBe('124');
    expect(await remaining('HEAD')).toBe('123');
    expect(await remaining('GET')).toBe('122');
  });
  it('spends a unit on a malformed body but none on a refused key, whose prefix is a real key\'s', async () => {
    const { key } = await seedAccount(t.ctx, { tier: 1 });
    const remaining = async () => (await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } })).headers['ratelimit-remaining'];
    expect(await remaining()).toBe('124');
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/registry/submit-passport',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: '{"address":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe('invalid_json');
    expect(malformed.headers['ratelimit-remaining']).toBe('123');
    // Same prefix, wrong secret: refused by authentication before the budget's hook runs.
    const forged = `${key.slice(0, -4)}${key.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    const refused = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': forged } });
    expect(refused.statusCode).toBe(401);
    expect(Object.keys(refused.json()).sort()).toEqual(['code', 'detail']);
    expect(refused.headers['ratelimit-remaining']).toBeUndefined();
    expect(await remaining()).toBe('122');
  });
});

describe('the wait named in a 429', () => {
  it.each([
    [1, '1 second'],
    [45, '45 seconds'],
    [60, '1 minute'],
    [90, '2 minutes'],
    [900, '15 minutes'],
    [3600, '1 hour'],
    [5400, '2 hours'],
    [86_400, '1 day'],
  ])('%i s reads "%s"', (seconds, text) => {
    expect(durationText(seconds)).toBe(text);
  });
});
