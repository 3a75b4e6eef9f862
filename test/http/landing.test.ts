import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

/** `/` sends a browser to the docs, the portal and the health check; API clients get JSON. */
describe.each(databaseKinds)('the root path on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t.close());

  it('answers a browser with a page linking the docs, the portal and health', async () => {
    const res = await t.app.inject({ url: '/', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const href of ['/docs', '/portal/', '/health/ready']) expect(res.body).toContain(`href="${href}"`);
    expect(res.headers.vary).toContain('Accept');
  });

  it('answers JSON clients (and clients that accept anything) with JSON', async () => {
    for (const accept of ['application/json', '*/*', undefined]) {
      const res = await t.app.inject({ url: '/', headers: accept ? { accept } : {} });
      expect(res.statusCode, String(accept)).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json().links.map((l: { href: string }) => l.href)).toEqual(['/docs', '/portal/', '/health/ready']);
    }
  });
});
