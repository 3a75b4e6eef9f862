import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CachedDocument, ENTRY_OVERHEAD_BYTES, GZIP_MIN_BYTES, gzipEtag, MemoryPublicCacheStore, PublicCache } from '../../../src/publicdata/cache.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { bountyFixtures, fullFixture, importOk, wallet } from '../fixtures.js';
import { BountiesEndpoint, REQUESTS_HEADERS } from '../python-client.js';

/** A document of `size` bytes of repeated JSON (compresses well), or of random bytes (does not). */
function documentOf(size: number, kind: 'json' | 'random', now: number): CachedDocument {
  const bytes = kind === 'random' ? randomBytes(size) : Buffer.from(JSON.stringify('ab'.repeat(size)).slice(0, size), 'utf8');
  return new CachedDocument(bytes, `"doc-${kind}-${size}"`, now);
}

describe('gzip bodies of cached documents', () => {
  const now = 1_000_000;
  const clock = () => now;

  async function cached(document: CachedDocument, options: { maxBytes?: number } = {}) {
    const store = new MemoryPublicCacheStore({ clock, maxBytes: options.maxBytes });
    const cache = new PublicCache(store, 60, clock);
    const served = await cache.document('k', async () => document);
    return { store, cache, served };
  }

  it('makes the gzip body on the second request, off the request, and counts it against the bound', async () => {
    const { store, cache, served } = await cached(documentOf(20_000, 'json', now));
    const before = store.bytes;
    expect(before).toBe(20_000 + 1 + ENTRY_OVERHEAD_BYTES);
    expect(cache.gzipOf(served)).toBeUndefined();
    // The second request starts the compression and does not wait for it.
    expect(cache.gzipOf(served)).toBeUndefined();
    const gzip = await vi.waitFor(() => cache.gzipOf(served) ?? Promise.reject(new Error('not yet')));
    expect(gunzipSync(gzip.bytes).equals(served.bytes)).toBe(true);
    expect(gzip.bytes.length).toBeLessThan(served.bytes.length / 10);
    expect(gzip.etag).toBe('W/"doc-json-20000-gzip"');
    expect(store.bytes).toBe(before + gzip.bytes.length);
    // Made once: every later request gets the same buffer.
    expect(cache.gzipOf(served)).toBe(gzip);
  });

  it('never compresses a document asked for once, a small one, or one that gzip does not shrink', async () => {
    const once = await cached(documentOf(20_000, 'json', now));
    expect(once.cache.gzipOf(once.served)).toBeUndefined();
    const small = await cached(documentOf(GZIP_MIN_BYTES - 1, 'json', now));
    const random = await cached(documentOf(20_000, 'random', now));
    for (let i = 0; i < 3; i++) {
      expect(small.cache.gzipOf(small.served)).toBeUndefined();
      expect(random.cache.gzipOf(random.served)).toBeUndefined();
    }
    // A compression started after theirs: once it is done, theirs (had they started) would be too.
    const control = await cached(documentOf(20_000, 'json', now));
    control.cache.gzipOf(control.served);
    control.cache.gzipOf(control.served);
    await vi.waitFor(() => control.cache.gzipOf(control.served) ?? Promise.reject(new Error('not yet')));
    for (const { cache, served, store } of [once, small, random]) {
      expect(cache.gzipOf(served)).toBeUndefined();
      expect(store.bytes).toBe(served.bytes.length + 1 + ENTRY_OVERHEAD_BYTES);
    }
  });

  it('evicts to stay within the bound when a gzip body is added, and adds nothing for a document no longer stored', async () => {
    const document = documentOf(20_000, 'json', now);
    const stored = 20_000 + 1 + ENTRY_OVERHEAD_BYTES;
    const full = await cached(document, { maxBytes: stored + 10 });
    full.cache.gzipOf(full.served);
    full.cache.gzipOf(full.served);
    await vi.waitFor(() => full.cache.gzipOf(full.served) ?? Promise.reject(new Error('not yet')));
    // JSON plus gzip body exceed the bound: the entry goes, and the bytes held say so.
    expect(full.store.size).toBe(0);
    expect(full.store.bytes).toBe(0);
    expect(full.store.evictions).toBe(1);

    const dropped = await cached(documentOf(20_000, 'json', now));
    dropped.cache.gzipOf(dropped.served);
    dropped.cache.gzipOf(dropped.served);
    await dropped.cache.invalidate(['k']);
    await vi.waitFor(() => dropped.cache.gzipOf(dropped.served) ?? Promise.reject(new Error('not yet')));
    expect(dropped.store.bytes).toBe(0);
  });

  it('runs at most two compressions at once; a document refused then is compressed on a later request', async () => {
    const store = new MemoryPublicCacheStore({ clock });
    const cache = new PublicCache(store, 60, clock);
    const served = await Promise.all(['a', 'b', 'c'].map((key, i) => cache.document(key, async () => documentOf(20_000 + i, 'json', now))));
    for (const document of served) {
      cache.gzipOf(document);
      cache.gzipOf(document);
    }
    const [a, b, c] = served as [CachedDocument, CachedDocument, CachedDocument];
    await vi.waitFor(() => (cache.gzipOf(a) && cache.gzipOf(b)) ?? Promise.reject(new Error('not yet')));
    const twoBodies = store.bytes;
    // c was asked for twice while two ran: no compression of it started; its next request starts one.
    expect(cache.gzipOf(c)).toBeUndefined();
    const gzip = await vi.waitFor(() => cache.gzipOf(c) ?? Promise.reject(new Error('not yet')));
    expect(store.bytes).toBe(twoBodies + gzip.bytes.length);
  });

  it('keeps a small gzip body in a buffer of its own (not a slab of the shared pool)', async () => {
    const { cache, served } = await cached(documentOf(2_000, 'json', now));
    cache.gzipOf(served);
    cache.gzipOf(served);
    const gzip = await vi.waitFor(() => cache.gzipOf(served) ?? Promise.reject(new Error('not yet')));
    expect(gzip.bytes.length).toBeLessThan(200);
    expect(gzip.bytes.buffer.byteLength).toBe(gzip.bytes.length);
  });

  it('adds nothing to a key stored again while the old document was being compressed', async () => {
    const store = new MemoryPublicCacheStore({ clock });
    const cache = new PublicCache(store, 60, clock);
    const old = await cache.document('k', async () => documentOf(20_000, 'json', now));
    cache.gzipOf(old);
    cache.gzipOf(old);
    await cache.invalidate(['k']);
    const fresh = await cache.document('k', async () => documentOf(30_000, 'json', now));
    await vi.waitFor(() => cache.gzipOf(old) ?? Promise.reject(new Error('not yet')));
    expect(store.bytes).toBe(fresh.bytes.length + 1 + ENTRY_OVERHEAD_BYTES);
  });

  it('keeps no gzip body for a build that is not stored (PUBLIC_CACHE_TTL=0)', async () => {
    const cache = new PublicCache(new MemoryPublicCacheStore({ clock }), 0, clock);
    const served = await cache.document('k', async () => documentOf(20_000, 'json', now));
    for (let i = 0; i < 3; i++) expect(cache.gzipOf(served)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(cache.gzipOf(served)).toBeUndefined();
  });

  it('names the gzip body with its own strong tag', () => {
    expect(gzipEtag('"abc-1"')).toBe('W/"abc-1-gzip"');
  });
});

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A request over a real socket, the body as the bytes received (node:http does not decompress). */
function raw(origin: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The fields of `Vary`, sorted (CORS, on for these tests, adds `Origin`). */
function varyOf(res: RawResponse): string[] {
  return String(res.headers.vary ?? '').split(/,\s*/).sort();
}

/** Asks until the answer comes gzipped (the gzip body is made after the second request, in the thread pool). */
async function untilGzipped(origin: string, path: string, headers: Record<string, string> = REQUESTS_HEADERS): Promise<RawResponse> {
  return vi.waitFor(async () => {
    const res = await raw(origin, path, headers);
    if (res.headers['content-encoding'] !== 'gzip') throw new Error('not gzipped yet');
    return res;
  }, { timeout: 5000, interval: 20 });
}

describe.each(databaseKinds)('gzip answers of the public data API over a socket on %s', (kind) => {
  let t: TestApp;
  let origin: string;
  beforeAll(async () => {
    t = await createTestApp(kind, { CORS_ORIGINS: 'https://app.example' });
    await importOk(t.ctx, fullFixture());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t.close());

  it('answers requests-shaped requests with the same JSON gzipped once cached, with its own ETag and the same headers', async () => {
    const path = '/api/v0.1/bounties/?order_by=pk&limit=4';
    const first = await raw(origin, path, REQUESTS_HEADERS);
    expect(first.status).toBe(200);
    expect(first.headers['content-encoding']).toBeUndefined();
    expect(varyOf(first)).toEqual(['Accept-Encoding', 'Origin']);
    expect(first.body.length).toBeGreaterThanOrEqual(GZIP_MIN_BYTES);
    const gzipped = await untilGzipped(origin, path);
    expect(gzipped.status).toBe(200);
    expect(gunzipSync(gzipped.body).equals(first.body)).toBe(true);
    expect(Number(gzipped.headers['content-length'])).toBe(gzipped.body.length);
    expect(gzipped.body.length).toBeLessThan(first.body.length);
    expect(gzipped.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(gzipped.headers.etag).toBe(gzipEtag(first.headers.etag as string));
    expect(varyOf(gzipped)).toEqual(['Accept-Encoding', 'Origin']);
    for (const name of ['x-total-count', 'link']) expect(gzipped.headers[name], name).toBe(first.headers[name]);
    expect(gzipped.headers['cache-control']).toMatch(/^public, max-age=(3600|3599)$/);
    // A client without Accept-Encoding (curl without --compressed) still gets the JSON as it is.
    const plain = await raw(origin, path);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(first.body)).toBe(true);
    expect(plain.headers.etag).toBe(first.headers.etag);
  });

  it('answers If-None-Match with 304 for the tag of a body the request may get, naming that tag', async () => {
    const path = '/api/v0.1/bounties/?order_by=-pk';
    const first = await raw(origin, path, REQUESTS_HEADERS);
    const gzipped = await untilGzipped(origin, path);
    expect(gzipped.headers.etag).toMatch(/^W\/"[\w-]+-gzip"$/);
    for (const held of [first.headers.etag as string, gzipped.headers.etag as string]) {
      const again = await raw(origin, path, { ...REQUESTS_HEADERS, 'if-none-match': held });
      expect(again.status, held).toBe(304);
      expect(again.body.length).toBe(0);
      expect(again.headers.etag).toBe(held);
      expect(again.headers['content-encoding']).toBeUndefined();
      expect(varyOf(again)).toEqual(['Accept-Encoding', 'Origin']);
    }
    // The JSON's tag is good for a client without gzip; the gzip body's is not: it gets the JSON.
    expect((await raw(origin, path, { 'if-none-match': first.headers.etag as string })).status).toBe(304);
    const plain = await raw(origin, path, { 'if-none-match': gzipped.headers.etag as string });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.etag).toBe(first.headers.etag);
    expect(plain.body.equals(first.body)).toBe(true);
    // Both held: the 304 names the tag of the body this request would get.
    const both = `${first.headers.etag as string}, ${gzipped.headers.etag as string}`;
    expect((await raw(origin, path, { ...REQUESTS_HEADERS, 'if-none-match': both })).headers.etag).toBe(gzipped.headers.etag);
    expect((await raw(origin, path, { 'if-none-match': both })).headers.etag).toBe(first.headers.etag);
    expect((await raw(origin, path, { ...REQUESTS_HEADERS, 'if-none-match': '*' })).headers.etag).toBe(gzipped.headers.etag);
    // Before the gzip body exists, `*` names the JSON's tag: that is the body this request would get.
    const fresh = await raw(origin, '/api/v0.1/bounties/?order_by=-pk&limit=3', { ...REQUESTS_HEADERS, 'if-none-match': '*' });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.etag).toMatch(/^"[\w-]+"$/);
    expect((await raw(origin, path, { 'if-none-match': '*' })).headers.etag).toBe(first.headers.etag);
    expect((await raw(origin, path, { ...REQUESTS_HEADERS, 'if-none-match': '"other-gzip"' })).status).toBe(200);
  });

  it('follows Accept-Encoding: q=0 and unknown codings get the JSON, * gets gzip, HEAD gets the headers', async () => {
    const path = '/api/v0.1/grants/';
    const first = await raw(origin, path, REQUESTS_HEADERS);
    expect(first.body.length).toBeGreaterThanOrEqual(GZIP_MIN_BYTES);
    await untilGzipped(origin, path);
    const refusing = ['gzip;q=0', 'identity', 'br', 'deflate', 'gzip;q=0, identity;q=0.5', 'gzip;q=x, br, *;q=0', 'gzip;q=0, *', '*, gzip;q=0', '*;q=0.5, gzip; q=0.000', 'GZIP;Q=0, *'];
    for (const acceptEncoding of refusing) {
      const res = await raw(origin, path, { 'accept-encoding': acceptEncoding });
      expect(res.headers['content-encoding'], acceptEncoding).toBeUndefined();
      expect(res.body.equals(first.body), acceptEncoding).toBe(true);
    }
    for (const acceptEncoding of ['*', 'GZIP', 'br;q=1, gzip;q=0.5', 'x-gzip, gzip']) {
      const res = await raw(origin, path, { 'accept-encoding': acceptEncoding });
      expect(res.headers['content-encoding'], acceptEncoding).toBe('gzip');
      expect(gunzipSync(res.body).equals(first.body), acceptEncoding).toBe(true);
    }
    const gzipped = await raw(origin, path, REQUESTS_HEADERS);
    const head = await raw(origin, path, REQUESTS_HEADERS, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(Number(head.headers['content-length'])).toBe(gzipped.body.length);
    expect(head.headers.etag).toBe(gzipped.headers.etag);
  });

  it('keeps the Vary of CORS (Origin) beside Accept-Encoding', async () => {
    const res = await raw(origin, '/api/v0.1/bounties/?order_by=pk&limit=5', { ...REQUESTS_HEADERS, origin: 'https://app.example' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(varyOf(res)).toEqual(['Accept-Encoding', 'Origin']);
  });

  it('never compresses an export for an authenticated team member (private), and keeps its Vary: Cookie', async () => {
    const alice = await t.ctx.database.db.selectFrom('profiles').select('id').where('handle_key', '=', 'alice').executeTakeFirstOrThrow();
    const { _key, _secret } = await t.ctx.publicData.exportAuth.rotateCredentials(alice.id);
    // Enough contributors that the export is large enough to compress, were it public.
    const contributions = Array.from({ length: 40 }, (_, i) => ({
      id: 100 + i, grant: 1, round: 1, address: wallet(100 + i), amount: '1', token: 'DAI', created_on: '2026-01-03T00:00:00Z',
    }));
    await importOk(t.ctx, { contributions });
    const path = `/grants/v1/api/export_addresses/grant1.json?_key=${_key}&_secret=${_secret}`;
    for (let i = 0; i < 5; i++) {
      const res = await raw(origin, path, { ...REQUESTS_HEADERS, origin: 'https://app.example' });
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThanOrEqual(GZIP_MIN_BYTES);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(varyOf(res)).toEqual(['Cookie', 'Origin']);
      JSON.parse(res.body.toString('utf8'));
    }
  });

  it('serves the Python client the same bounties gzipped as plain', async () => {
    const plain = await (await fetch(`${origin}/api/v0.1/bounties/`, { headers: { 'accept-encoding': 'identity' } })).json();
    const api = new BountiesEndpoint(`${origin}/api/v0.1/bounties/`);
    await vi.waitFor(async () => {
      await api.all();
      if (api.sent.at(-1)?.headers.get('content-encoding') !== 'gzip') throw new Error('not gzipped yet');
    }, { timeout: 5000, interval: 20 });
    expect(await api.all()).toEqual(plain);
    expect(api.sent.at(-1)?.headers.get('content-encoding')).toBe('gzip');
    expect(plain).toHaveLength(bountyFixtures().length);
  });
});
