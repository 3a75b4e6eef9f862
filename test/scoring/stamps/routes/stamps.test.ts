import { keccak256, stringToHex } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { giveStamps } from '../../../helpers/stamps.js';

const address = '0x' + '12'.repeat(20);
// Stored oldest first, so the newest-first listing numbers them 1..10 from the end of this list.
const providers = ['Google', 'Discord', 'Linkedin', 'Ens', 'Facebook', 'Brightid', 'Poh', 'Coinbase', 'Lens', 'Unknown-Provider'];
const element = (n: number) => providers[providers.length - n];

describe.each(databaseKinds)('GET /registry/stamps/{address} on %s', (kind) => {
  let t: TestApp;
  let key: string;

  async function get(url: string) {
    return t.app.inject({ url, headers: { 'x-api-key': key, host: 'api.example.test' } });
  }
  const providersOf = (body: { items: { credential: { credentialSubject: { provider: string } } }[] }) =>
    body.items.map((i) => i.credential.credentialSubject.provider);
  const pathOf = (url: string) => url.replace('http://api.example.test', '');

  beforeEach(async () => {
    t = await createTestApp(kind);
    key = (await seedAccount(t.ctx)).key;
    for (const provider of providers) await giveStamps(t.ctx, address, [provider]);
  });
  afterEach(async () => t.close());

  it('lists the stored credentials unchanged, newest first', async () => {
    const body = (await get(`/registry/stamps/${address}`)).json();
    expect(providersOf(body)).toEqual([...providers].reverse());
    expect(body.items[0].version).toBe('1.0.0');
    expect(body.items[0]).not.toHaveProperty('metadata');
    const stored = await t.ctx.database.db.selectFrom('stamps').select('credential').where('provider', '=', element(1)!).executeTakeFirstOrThrow();
    expect(body.items[0].credential).toEqual(JSON.parse(stored.credential));
    expect(body.next).toBeNull();
    expect(body.prev).toBeNull();
  });

  it('rule 1: limit=x gives at most x items', async () => {
    expect(providersOf((await get(`/registry/stamps/${address}?limit=3`)).json())).toEqual([element(1), element(2), element(3)]);
  });

  it('rule 2: with limit 3, the page of elements 4-6 links prev to 1-3 and next to 7-9, keeping the limit', async () => {
    const page = (await get(`/registry/stamps/${address}?limit=3&offset=3`)).json();
    expect(providersOf(page)).toEqual([element(4), element(5), element(6)]);
    expect(page.prev).toMatch(/^http:\/\/api\.example\.test\/registry\/stamps\/0x[0-9a-f]{40}\?limit=3&token=/);
    expect(page.next).toMatch(/limit=3&token=/);
    const prev = (await get(pathOf(page.prev))).json();
    const next = (await get(pathOf(page.next))).json();
    expect(providersOf(prev)).toEqual([element(1), element(2), element(3)]);
    expect(providersOf(next)).toEqual([element(7), element(8), element(9)]);
    expect(prev.prev).toBeNull();
    // Paging forward then back returns the same items.
    const backAgain = (await get(pathOf(next.prev))).json();
    expect(providersOf(backAgain)).toEqual(providersOf(page));
    const last = (await get(pathOf(next.next))).json();
    expect(providersOf(last)).toEqual([element(10)]);
    expect(last.next).toBeNull();
  });

  it('rule 3: offset=5&limit=5 returns elements 6-10', async () => {
    const page = (await get(`/registry/stamps/${address}?offset=5&limit=5`)).json();
    expect(providersOf(page)).toEqual([6, 7, 8, 9, 10].map(element));
    expect(page.next).toBeNull();
    expect(providersOf((await get(pathOf(page.prev))).json())).toEqual([1, 2, 3, 4, 5].map(element));
  });

  it('walks every page with next and sees each stamp exactly once', async () => {
    const seen: string[] = [];
    let url: string | null = `/registry/stamps/${address}?limit=4`;
    while (url) {
      const body: { next: string | null; items: { credential: { credentialSubject: { provider: string } } }[] } = (await get(url)).json();
      seen.push(...providersOf(body));
      url = body.next ? pathOf(body.next) : null;
    }
    expect(seen).toEqual([...providers].reverse());
  });

  it('adds catalogue metadata with include_metadata=true, null for an unknown provider, and keeps it in links', async () => {
    const body = (await get(`/registry/stamps/${address}?include_metadata=true&limit=2`)).json();
    expect(body.items[0].metadata).toBeNull();
    expect(body.items[0].credential.credentialSubject.provider).toBe('Unknown-Provider');
    expect(body.items[1].metadata).toEqual({
      name: 'Lens',
      description: expect.any(String),
      hash: keccak256(stringToHex('Lens')),
      group: expect.any(String),
      platform: expect.objectContaining({ id: expect.any(String), name: expect.any(String), icon: expect.stringMatching(/^http:\/\//) }),
    });
    expect(body.next).toContain('include_metadata=true');
    const next = (await get(pathOf(body.next))).json();
    expect(next.items[0].metadata).toEqual(t.ctx.catalogue.metadataFor(element(3)!));
    // Icons are absolute URLs on the request origin (development without PUBLIC_BASE_URL).
    const lens = t.ctx.catalogue.metadataFor('Lens')!;
    expect(body.items[1].metadata.platform.icon).toBe(`http://api.example.test/static/icons/${lens.platform.icon}`);
  });

  it('leaves out deleted and revoked stamps', async () => {
    await t.ctx.stamps.revoke({ address, provider: 'Google' });
    await t.ctx.database.db.updateTable('stamps').set({ deleted_at: Date.now() }).where('provider', '=', 'Discord').execute();
    const listed = providersOf((await get(`/registry/stamps/${address}`)).json());
    expect(listed).toHaveLength(8);
    expect(listed).not.toContain('Google');
    expect(listed).not.toContain('Discord');
  });

  it('uses PUBLIC_BASE_URL for links when configured', async () => {
    await t.close();
    t = await createTestApp(kind, { PUBLIC_BASE_URL: 'https://passport.example.org/api/' });
    key = (await seedAccount(t.ctx)).key;
    await giveStamps(t.ctx, address, ['Google', 'Discord']);
    const body = (await get(`/registry/stamps/${address}?limit=1`)).json();
    expect(body.next).toMatch(/^https:\/\/passport\.example\.org\/api\/registry\/stamps\//);
  });

  it('answers an address without stamps with an empty page', async () => {
    expect((await get(`/registry/stamps/0x${'9'.repeat(40)}`)).json()).toEqual({ next: null, prev: null, items: [] });
  });

  it.each([
    ['limit=1001', 'invalid_limit'],
    ['limit=-2', 'invalid_limit'],
    ['offset=abc', 'invalid_offset'],
    ['token=garbage', 'invalid_token'],
    ['token=p1.bm90LWEtbnVtYmVy', 'invalid_token'],
    [`token=${'x'.repeat(100)}`, 'invalid_request'],
  ])('refuses %s with 400 %s', async (query, code) => {
    const res = await get(`/registry/stamps/${address}?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.any(String), code });
  });

  it('takes empty optional parameters as not given', async () => {
    const body = (await get(`/registry/stamps/${address}?limit=&offset=&include_metadata=&token=`)).json();
    expect(providersOf(body)).toEqual([...providers].reverse());
    expect(body.items[0]).not.toHaveProperty('metadata');
  });

  it('accepts the maximum limit of 1000', async () => {
    expect((await get(`/registry/stamps/${address}?limit=1000`)).json().items).toHaveLength(10);
  });

  it('refuses a malformed address and a missing key', async () => {
    expect((await get('/registry/stamps/0x1234')).json().code).toBe('invalid_address');
    expect((await t.app.inject(`/registry/stamps/${address}`)).statusCode).toBe(401);
  });
});

describe.each(databaseKinds)('GET /registry/stamp-metadata on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  it('serves the whole catalogue with keccak256 hashes of the provider names', async () => {
    const { key } = await seedAccount(t.ctx);
    const res = await t.app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.length).toBe(t.ctx.catalogue.platforms.length);
    const stamps = body.flatMap((p: { groups: { stamps: { name: string; hash: string }[] }[] }) => p.groups.flatMap((g) => g.stamps));
    expect(stamps.length).toBe(t.ctx.catalogue.defaultWeights.size);
    for (const stamp of stamps) expect(stamp.hash).toBe(keccak256(stringToHex(stamp.name)));
    expect(Object.keys(body[0]).sort()).toEqual(['connectMessage', 'description', 'groups', 'icon', 'id', 'name']);
    expect(JSON.stringify(body)).not.toContain('weight');
  });

  it('needs an API key', async () => {
    expect((await t.app.inject('/registry/stamp-metadata')).statusCode).toBe(401);
  });
});
