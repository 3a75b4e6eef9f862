/**
 * A path served with other methods answers 405 with `Allow`, on every documented route, while
 * unknown paths stay 404 and HEAD and CORS preflights keep working; and a value that does not match
 * a schema's pattern is told what it should be in words, never as the regular expression.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPatternWords } from '../../src/http/pattern-words.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const address = '0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b';
const documentedMethods = ['get', 'put', 'post', 'patch', 'delete'];

describe.each(databaseKinds)('wrong methods and patterned inputs on %s', (kind) => {
  let t: TestApp;
  let apiKey: string;
  beforeAll(async () => {
    t = await createTestApp(kind, { CORS_ORIGINS: 'https://app.example.org' });
    const seeded = await seedAccount(t.ctx);
    apiKey = seeded.key;
  });
  afterAll(async () => t.close());

  it('answers GET /registry/submit-passport with 405, Allow: POST and the standard body', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/registry/submit-passport', headers: { 'x-api-key': apiKey } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.json()).toEqual({ detail: expect.stringContaining('POST'), code: 'method_not_allowed' });
  });

  it('answers 405 with every allowed method for each documented path, and 404 for an unknown one', async () => {
    const document = (await t.app.inject('/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> };
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      const allowed = Object.keys(item).filter((m) => documentedMethods.includes(m));
      const wrong = documentedMethods.find((m) => !allowed.includes(m));
      if (!wrong) continue;
      const url = path.replace(/\{[^}]+\}/g, 'x');
      const res = await t.app.inject({ method: wrong.toUpperCase() as 'GET', url });
      expect(res.statusCode, `${wrong.toUpperCase()} ${url}`).toBe(405);
      expect(res.json().code).toBe('method_not_allowed');
      const allow = (res.headers.allow as string).split(', ');
      for (const method of allowed) expect(allow, `Allow of ${url}`).toContain(method.toUpperCase());
      if (allowed.includes('get')) expect(allow).toContain('HEAD');
      checked += 1;
    }
    expect(checked).toBeGreaterThan(40);
    const missing = await t.app.inject({ method: 'GET', url: '/registry/no-such-thing' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
  });

  it('keeps HEAD of GET routes and CORS preflights', async () => {
    const head = await t.app.inject({ method: 'HEAD', url: '/health/live' });
    expect(head.statusCode).toBe(200);
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/registry/submit-passport',
      headers: { origin: 'https://app.example.org', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.org');
  });

  it('says in words what a patterned path parameter must be', async () => {
    const cases: [string, string][] = [
      [`/registry/score/12a/${address}`, 'must be a decimal number of at most 15 digits'],
      [`/registry/gtc-stake/${address}/1x`, 'must be a decimal number of at most 78 digits'],
      ['/v2/batches/not-a-batch', 'must be "bat_" followed by 16 letters, digits, "_" or "-"'],
      [`/v2/stamps/1234567890123456/score/${address}`, 'must be a decimal number of at most 15 digits'],
    ];
    for (const [url, words] of cases) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } });
      expect(res.statusCode, url).toBe(400);
      const body = res.json() as { detail: string; code: string };
      expect(body.detail, url).toContain(words);
      expect(body.detail, url).not.toMatch(/pattern|\^|\$"/);
    }
  });

  it('has words for every pattern in the documented route schemas', async () => {
    const text = (await t.app.inject('/openapi.json')).body;
    const patterns = new Set<string>();
    JSON.parse(text, (key, value) => {
      if (key === 'pattern' && typeof value === 'string') patterns.add(value);
      return value;
    });
    expect(patterns.size).toBeGreaterThan(5);
    expect([...patterns].filter((p) => !hasPatternWords(p))).toEqual([]);
  });
});
