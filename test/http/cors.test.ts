import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';

describe('CORS', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('answers preflights for configured origins without an API key and exposes the rate-limit headers', async () => {
    t = await createTestApp('sqlite', { CORS_ORIGINS: 'https://dapp.example.org' });
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/registry/submit-passport',
      headers: { origin: 'https://dapp.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://dapp.example.org');
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain('x-api-key');

    const { key } = await seedAccount(t.ctx);
    const read = await t.app.inject({ url: '/registry/stamp-metadata', headers: { origin: 'https://dapp.example.org', 'x-api-key': key } });
    expect(read.headers['access-control-allow-origin']).toBe('https://dapp.example.org');
    expect(String(read.headers['access-control-expose-headers'])).toContain('RateLimit-Remaining');
  });

  it('gives other origins no CORS headers', async () => {
    t = await createTestApp('sqlite', { CORS_ORIGINS: 'https://dapp.example.org' });
    const res = await t.app.inject({ url: '/health/live', headers: { origin: 'https://evil.example.com' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows any origin with *', async () => {
    t = await createTestApp('sqlite', { CORS_ORIGINS: '*' });
    const res = await t.app.inject({ url: '/health/live', headers: { origin: 'https://anywhere.example' } });
    expect(res.headers['access-control-allow-origin']).toBeTruthy();
  });

  it('is off by default', async () => {
    t = await createTestApp('sqlite');
    const res = await t.app.inject({ url: '/health/live', headers: { origin: 'https://dapp.example.org' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
