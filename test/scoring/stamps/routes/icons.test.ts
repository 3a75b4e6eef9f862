import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadIconFiles } from '../../../../src/scoring/stamps/icons.js';
import { loadCatalogue } from '../../../../src/scoring/stamps/catalogue.js';
import { createTestApp, seedAccount, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { giveStamps } from '../../../helpers/stamps.js';

const address = '0x' + '34'.repeat(20);

describe('shipped icons', () => {
  it('has a file for every platform of the default catalogue, each an SVG of our own drawing', () => {
    const files = loadIconFiles();
    const catalogue = loadCatalogue();
    for (const platform of catalogue.platforms) {
      const file = files.get(platform.icon);
      expect(file, platform.icon).toBeDefined();
      expect(file?.contentType).toBe('image/svg+xml');
      const text = file!.body.toString('utf8');
      expect(text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(text).not.toMatch(/<script|href=|xlink|<image|<foreignObject/i);
    }
  });
});

describe.each(databaseKinds)('icons on %s', (kind) => {
  let t: TestApp;
  let key: string;
  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ url, headers: { 'x-api-key': key, host: 'api.example.test', ...headers } });

  async function start(env: Record<string, string> = {}) {
    t = await createTestApp(kind, env);
    key = (await seedAccount(t.ctx)).key;
  }
  beforeEach(async () => start());
  afterEach(async () => t.close());

  it('serves an icon with its content type, a long cache lifetime and an ETag, without an API key', async () => {
    const res = await t.app.inject('/static/icons/googleStampIcon.svg');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml');
    expect(res.headers['cache-control']).toBe('public, max-age=2592000');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toBe(readFileSync(new URL('../../../../assets/icons/googleStampIcon.svg', import.meta.url), 'utf8'));
    const again = await t.app.inject({ url: '/static/icons/googleStampIcon.svg', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it.each([
    '/static/icons/nope.svg',
    '/static/icons/..%2Fstamp-catalogue.json',
    '/static/icons/%2e%2e%2f%2e%2e%2fpackage.json',
    '/static/icons/../../package.json',
    '/static/icons/..',
    '/static/icons/',
    '/static/icons/googleStampIcon.svg%00.png',
  ])('answers %s with 404 and the standard body', async (url) => {
    const res = await t.app.inject(url);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: expect.any(String), code: 'not_found' });
    expect(res.body).not.toContain('/work/');
  });

  it('renders every catalogue icon as an absolute URL on the request origin in development, each one served', async () => {
    const platforms = (await get('/registry/stamp-metadata')).json() as { id: string; icon: string }[];
    expect(platforms.length).toBe(t.ctx.catalogue.platforms.length);
    for (const platform of platforms) {
      expect(platform.icon).toMatch(/^http:\/\/api\.example\.test\/static\/icons\/[A-Za-z0-9._-]+\.svg$/);
      const icon = await t.app.inject(platform.icon.replace('http://api.example.test', ''));
      expect(icon.statusCode, platform.icon).toBe(200);
    }
  });

  it('builds icon URLs from PUBLIC_BASE_URL, in the catalogue and in stamp metadata', async () => {
    await t.close();
    await start({ PUBLIC_BASE_URL: 'https://passport.example.org/api/' });
    const platforms = (await get('/registry/stamp-metadata')).json() as { id: string; icon: string }[];
    expect(platforms.find((p) => p.id === 'Google')?.icon).toBe('https://passport.example.org/api/static/icons/googleStampIcon.svg');
    await giveStamps(t.ctx, address, ['Google']);
    const page = (await get(`/registry/stamps/${address}?include_metadata=true`)).json();
    expect(page.items[0].metadata.platform.icon).toBe('https://passport.example.org/api/static/icons/googleStampIcon.svg');
  });

  it('builds icon URLs from ICON_BASE_URL (a CDN) when set, over PUBLIC_BASE_URL', async () => {
    await t.close();
    await start({ PUBLIC_BASE_URL: 'https://passport.example.org', ICON_BASE_URL: 'https://cdn.example.net/stamp-icons/' });
    const platforms = (await get('/registry/stamp-metadata')).json() as { id: string; icon: string }[];
    for (const platform of platforms) expect(platform.icon).toMatch(/^https:\/\/cdn\.example\.net\/stamp-icons\/[^/]+\.svg$/);
    await giveStamps(t.ctx, address, ['Linkedin', 'Unknown-Provider']);
    const page = (await get(`/registry/stamps/${address}?include_metadata=true`)).json();
    expect(page.items.map((i: { metadata: { platform: { icon: string } } | null }) => i.metadata?.platform.icon ?? null)).toEqual([
      null,
      'https://cdn.example.net/stamp-icons/linkedinStampIcon.svg',
    ]);
  });
});
