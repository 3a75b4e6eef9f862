import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryPublicCacheStore } from '../../../src/publicdata/cache.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { importOk } from '../fixtures.js';
import { vocabularyFixtures } from '../vocabulary-fixtures.js';

/** Public API protection (decisions.md "Public API protection"): budget per address, offset bound, cache keys and bytes. */
describe.each(databaseKinds)('public data API protection on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_MAX_BYTES: '65536' });
    await importOk(t.ctx, { bounties: vocabularyFixtures() });
  });
  afterAll(async () => t.close());

  const from = (remoteAddress: string, url: string) => t.app.inject({ url, remoteAddress });
  const store = () => t.ctx.publicData.cache.store as MemoryPublicCacheStore;

  it('allows 600 requests a minute per client address, answers the 601st with 429 and Retry-After; another address is unaffected', async () => {
    const first = await from('203.0.113.7', '/api/v0.1/bounties/?limit=1');
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('600');
    expect(first.headers['ratelimit-remaining']).toBe('599');
    expect(first.headers['ratelimit-reset']).toBeDefined();
    // Every public path spends the same budget: lists, details, redirects, exports, 404s of a bounty.
    const paths = ['/api/v0.1/bounties/?limit=1', '/api/v0.1/bounties/2', '/api/v0.1/grants', '/grants/grants.json', '/api/v0.1/bounties/77'];
    for (let i = 1; i < 600; i++) {
      const res = await from('203.0.113.7', paths[i % paths.length]!);
      expect(res.statusCode, `request ${i + 1}`).not.toBe(429);
    }
    const refused = await from('203.0.113.7', '/api/v0.1/bounties/');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ detail: expect.stringContaining('600 requests per minute'), code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    const other = await from('198.51.100.9', '/api/v0.1/bounties/');
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('599');
    const metrics = await t.app.inject('/metrics');
    expect(metrics.body).toMatch(/stampgate_rate_limit_rejections_total\{tier="public"\} 1/);
  });

  it('refuses offset above 10,000 with 400 invalid_offset, on bounties and grants; 10,000 itself is served', async () => {
    for (const path of ['/api/v0.1/bounties/', '/api/v0.1/grants/']) {
      const deep = await from('192.0.2.1', `${path}?offset=10001`);
      expect(deep.statusCode).toBe(400);
      expect(deep.json()).toEqual({ detail: expect.stringContaining('at most 10000'), code: 'invalid_offset' });
      const edge = await from('192.0.2.1', `${path}?offset=10000`);
      expect(edge.statusCode).toBe(200);
      expect(edge.json()).toEqual([]);
    }
  });

  it('keys the cache by the normalised known parameters: junk, order, case of values and defaults share one entry', async () => {
    await t.ctx.publicData.cache.invalidate(['bounties:']);
    const before = store().size;
    const spellings = [
      '/api/v0.1/bounties/?idx_status=open&network=mainnet',
      '/api/v0.1/bounties/?network=mainnet&idx_status=OPEN&format=json&cachebuster=1',
      '/api/v0.1/bounties/?idx_status=open,open&network=mainnet&order_by=-web3_created&limit=100&offset=0&cachebuster=2',
      '/api/v0.1/bounties/?idx_status=%20open%20&network=mainnet&x=' + 'y'.repeat(500),
    ];
    const etags = new Set<string>();
    for (const url of spellings) {
      const res = await from('192.0.2.2', url);
      expect(res.statusCode, url).toBe(200);
      expect(res.json().map((b: { pk: number }) => b.pk)).toEqual([6, 1]);
      etags.add(String(res.headers.etag));
    }
    expect(etags.size).toBe(1);
    expect(store().size).toBe(before + 1);
    // A different known value is a different entry.
    await from('192.0.2.2', '/api/v0.1/bounties/?idx_status=open&network=xdai');
    expect(store().size).toBe(before + 2);
  });

  it('bounds the cache by bytes: varied queries evict the least recently used, and /metrics reports bytes and evictions', async () => {
    const evictionsBefore = store().evictions;
    for (let i = 0; i < 40; i++) {
      const res = await from('192.0.2.3', `/api/v0.1/bounties/?limit=${100 + i}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toHaveLength(6);
      expect(store().bytes).toBeLessThanOrEqual(65536);
    }
    expect(store().evictions).toBeGreaterThan(evictionsBefore);
    const metrics = (await t.app.inject('/metrics')).body;
    expect(metrics).toContain(`stampgate_public_cache_bytes ${store().bytes}`);
    expect(metrics).toContain(`stampgate_public_cache_evictions_total ${store().evictions}`);
  });

  it('caches a bounty detail like the lists, and an import of bounties drops it', async () => {
    const first = await from('192.0.2.4', '/api/v0.1/bounties/3');
    expect(first.json()).toMatchObject({ pk: 3, title: 'Gamma' });
    const again = await from('192.0.2.4', '/api/v0.1/bounties/3/?junk=1');
    expect(again.headers.etag).toBe(first.headers.etag);
    await importOk(t.ctx, { bounties: vocabularyFixtures().map((b) => (b.id === 3 ? { ...b, title: 'Gamma 2' } : b)) });
    expect((await from('192.0.2.4', '/api/v0.1/bounties/3')).json()).toMatchObject({ pk: 3, title: 'Gamma 2' });
    const missing = await from('192.0.2.4', '/api/v0.1/bounties/4040');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: 'No bounty with pk 4040.', code: 'not_found' });
  });
});
