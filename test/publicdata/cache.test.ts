import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD_BYTES, etagOf, MemoryPublicCacheStore, PublicCache, toDocument } from '../../src/publicdata/cache.js';
import { etagMatches } from '../../src/publicdata/routes/http-cache.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { bountyFixtures, fullFixture, importOk, resetPublicData } from './fixtures.js';

describe('cache store and cache', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('expires documents after their TTL', async () => {
    const store = new MemoryPublicCacheStore({ clock });
    await store.set('a', toDocument([1], now), 10);
    expect(await store.get('a')).toBeDefined();
    now += 10_000;
    expect(await store.get('a')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('evicts the least recently used beyond its byte bound, counting bytes and evictions', async () => {
    // Each one-letter entry costs 1 (key) + 3 (body "\"a\"") + the per-entry allowance.
    const small = 1 + 3 + ENTRY_OVERHEAD_BYTES;
    const store = new MemoryPublicCacheStore({ clock, maxBytes: 2 * small });
    await store.set('a', toDocument('a', now), 60);
    await store.set('b', toDocument('b', now), 60);
    expect(store.bytes).toBe(2 * small);
    await store.get('a');
    await store.set('c', toDocument('c', now), 60);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBeDefined();
    expect(store.evictions).toBe(1);
    // Multi-byte text counts in UTF-8 bytes, not characters: 'é' is 2 bytes.
    await store.set('d', toDocument('é'.repeat(small), now), 60);
    expect(await store.get('d')).toBeUndefined();
    expect(store.bytes).toBe(2 * small);
    // Fits alone (3 + small - 8 + 256 bytes), so both older entries go.
    await store.set('big', toDocument('x'.repeat(small - 10), now), 60);
    expect(store.size).toBe(1);
    expect(store.bytes).toBe(3 + small - 8 + ENTRY_OVERHEAD_BYTES);
    expect(store.evictions).toBe(3);
  });

  it('keeps least-recently-used order when the newest entry is hit again and again', () => {
    const small = 1 + 3 + ENTRY_OVERHEAD_BYTES;
    const store = new MemoryPublicCacheStore({ clock, maxBytes: 3 * small });
    for (const key of ['a', 'b', 'c']) void store.set(key, toDocument(key, now), 60);
    // c is the newest: hits leave the order a, b, c; then a becomes the newest.
    for (let i = 0; i < 3; i++) expect(store.get('c')).toBeDefined();
    expect(store.get('a')).toBeDefined();
    expect(store.get('a')).toBeDefined();
    void store.set('d', toDocument('d', now), 60);
    expect(store.get('b')).toBeUndefined();
    // The order is now c, a, d: the next insertion evicts c, not the repeatedly hit a.
    void store.set('e', toDocument('e', now), 60);
    expect(store.get('c')).toBeUndefined();
    expect([store.get('a'), store.get('d'), store.get('e')].every((document) => document !== undefined)).toBe(true);
    // The newest removed by its expiry, then stored again: it is the newest once more.
    now += 61_000;
    expect(store.get('e')).toBeUndefined();
    void store.set('e', toDocument('E', now), 60);
    void store.set('f', toDocument('f', now), 60);
    void store.set('g', toDocument('g', now), 60);
    expect(store.get('e')?.body).toBe('"E"');
    expect(store.size).toBe(3);
  });

  it('answers a hit at once, without a promise', async () => {
    const cache = new PublicCache(new MemoryPublicCacheStore({ clock }), 60, clock);
    const built = await cache.document('k', async () => ['x']);
    const hit = cache.document('k', async () => ['y']);
    expect(hit).toBe(built);
  });

  it('invalidates by prefix', async () => {
    const store = new MemoryPublicCacheStore({ clock });
    for (const key of ['bounties:1', 'bounties:2', 'grants:1']) await store.set(key, toDocument(key, now), 60);
    await store.invalidate('bounties:');
    expect(await store.get('bounties:1')).toBeUndefined();
    expect(await store.get('grants:1')).toBeDefined();
  });

  it('shares one build among concurrent misses and keeps no build that raced an invalidation', async () => {
    const cache = new PublicCache(new MemoryPublicCacheStore({ clock }), 60, clock);
    let builds = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const build = async () => {
      builds += 1;
      await gate;
      return { builds };
    };
    const both = Promise.all([cache.document('k', build), cache.document('k', build)]);
    release();
    const [a, b] = await both;
    expect(builds).toBe(1);
    expect(a).toBe(b);

    let releaseSlow!: () => void;
    const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
    const slow = cache.document('other', async () => {
      await slowGate;
      return 'old data';
    });
    await cache.invalidate(['other']);
    releaseSlow();
    expect(JSON.parse((await slow).body)).toBe('old data');
    expect(JSON.parse((await cache.document('other', async () => 'new data')).body)).toBe('new data');
  });

  it('tells clients what is left of the TTL', () => {
    const cache = new PublicCache(new MemoryPublicCacheStore({ clock }), 3600, clock);
    const document = toDocument([], now);
    expect(cache.remainingSeconds(document)).toBe(3600);
    now += 1_000_500;
    expect(cache.remainingSeconds(document)).toBe(2599);
    now += 10_000_000;
    expect(cache.remainingSeconds(document)).toBe(0);
  });

  it('compares If-None-Match weakly, in lists, and with *', () => {
    expect(etagMatches('"abc"', '"abc"')).toBe(true);
    expect(etagMatches('W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"x", "abc"', '"abc"')).toBe(true);
    expect(etagMatches('*', '"abc"')).toBe(true);
    expect(etagMatches('"abcd"', '"abc"')).toBe(false);
    expect(etagMatches(undefined, '"abc"')).toBe(false);
  });
});

describe.each(databaseKinds)('HTTP caching of lists and exports on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    await resetPublicData(t.ctx);
    await importOk(t.ctx, fullFixture());
  });

  const anonymous = [
    '/api/v0.1/bounties/?is_open=true',
    '/api/v0.1/grants/',
    '/grants/grants.json',
    '/grants/v1/api/export_addresses/round1.json',
    '/grants/v1/api/export_addresses/all.json',
  ];

  it('marks anonymous lists and exports public for up to PUBLIC_CACHE_TTL, with an ETag, and answers If-None-Match with 304', async () => {
    for (const url of anonymous) {
      const first = await t.app.inject(url);
      expect(first.statusCode, url).toBe(200);
      expect(first.headers['cache-control']).toMatch(/^public, max-age=(3600|3599)$/);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await t.app.inject({ url, headers: { 'if-none-match': etag } });
      expect(again.statusCode, url).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toMatch(/^public, max-age=/);
      const weak = await t.app.inject({ url, headers: { 'if-none-match': `"other", W/${etag}` } });
      expect(weak.statusCode).toBe(304);
      const changed = await t.app.inject({ url, headers: { 'if-none-match': '"something-else"' } });
      expect(changed.statusCode).toBe(200);
      expect(changed.body).toBe(first.body);
    }
  });

  it('names each build of a bounty document in its ETag: a rebuild answers the old tag in full; an empty list keeps its content hash', async () => {
    const url = '/api/v0.1/bounties/?order_by=pk';
    const detail = '/api/v0.1/bounties/2';
    const empty = '/api/v0.1/bounties/?pk=999999';
    const before = await Promise.all([url, detail, empty].map((u) => t.app.inject(u)));
    expect(before.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(before[2]!.headers.etag).toBe(etagOf(Buffer.from('[]')));
    expect(new Set(before.map((r) => r.headers.etag)).size).toBe(3);
    // Bodies with bounties are not hashed per build (SHA-256 of its 100 KB was 13 % of an uncached list).
    expect(before[0]!.headers.etag).not.toBe(etagOf(before[0]!.rawPayload));
    expect(before[1]!.headers.etag).not.toBe(etagOf(before[1]!.rawPayload));
    // An import of the same bounty drops the cached bounty documents: each is built again.
    await new Promise((resolve) => setTimeout(resolve, 2));
    await importOk(t.ctx, { bounties: [bountyFixtures()[1]!] });
    for (const [i, u] of [url, detail, empty].entries()) {
      const again = await t.app.inject({ url: u, headers: { 'if-none-match': before[i]!.headers.etag as string } });
      if (u === empty) {
        expect(again.statusCode, u).toBe(304);
        continue;
      }
      expect(again.statusCode, u).toBe(200);
      expect(again.headers.etag, u).not.toBe(before[i]!.headers.etag);
      expect(again.headers.etag, u).toMatch(/^"[\w-]+"$/);
      // The same bounties, built at another time: the bodies differ only in `now`.
      const strip = (body: string) => body.replace(/"now":"[^"]+"/g, '"now":""');
      expect(again.body, u).not.toBe(before[i]!.body);
      expect(strip(again.body), u).toBe(strip(before[i]!.body));
    }
  });

  it('marks authenticated grant exports private, no-store', async () => {
    const alice = await t.ctx.database.db.selectFrom('profiles').select('id').where('handle_key', '=', 'alice').executeTakeFirstOrThrow();
    const { _key, _secret } = await t.ctx.publicData.exportAuth.rotateCredentials(alice.id);
    const res = await t.app.inject(`/grants/v1/api/export_addresses/grant1.json?_key=${_key}&_secret=${_secret}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers.etag).toBeDefined();
  });

  it('serves from the cache until an import changes the data, then drops only what changed', async () => {
    const list = async () => (await t.app.inject('/api/v0.1/bounties/?order_by=pk')).json().map((b: { pk: number }) => b.pk);
    const round1 = async () => (await t.app.inject('/grants/v1/api/export_addresses/round1.json')).json();
    expect(await list()).toEqual([1, 2, 3, 4, 5, 6]);
    const exportBefore = await round1();

    // Written behind the service's back: the cached list stays (up to the TTL).
    await t.ctx.database.db.deleteFrom('bounties').where('id', '=', 6).execute();
    expect(await list()).toEqual([1, 2, 3, 4, 5, 6]);

    // An import of bounties drops the bounty lists, not the exports.
    await importOk(t.ctx, { bounties: [{ ...bountyFixtures()[0], id: 7, github_url: 'https://github.com/org/repo/issues/7' }] });
    expect(await list()).toEqual([1, 2, 3, 4, 5, 7]);
    expect((await round1()).meta.generated_at).toBe(exportBefore.meta.generated_at);

    // An import of contributions drops the exports.
    await importOk(t.ctx, { contributions: [{ id: 50, grant: 2, round: 1, address: '0x' + '9'.repeat(40), amount: '1', token: 'DAI', created_on: '2026-01-03T00:00:00Z' }] });
    expect((await round1()).addresses).toContain('0x' + '9'.repeat(40));
  });

});

describe('PUBLIC_CACHE_TTL=0', () => {
  it('never caches', async () => {
    const fresh = await createTestApp('sqlite', { PUBLIC_CACHE_TTL: '0' });
    try {
      await importOk(fresh.ctx, { bounties: bountyFixtures() });
      const first = await fresh.app.inject('/api/v0.1/bounties/');
      expect(first.headers['cache-control']).toBe('public, max-age=0');
      await fresh.ctx.database.db.deleteFrom('bounties').where('id', '=', 6).execute();
      expect((await fresh.app.inject('/api/v0.1/bounties/')).json()).toHaveLength(5);
    } finally {
      await fresh.close();
    }
  });
});
