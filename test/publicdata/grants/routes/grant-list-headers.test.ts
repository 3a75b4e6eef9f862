import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNT_AHEAD } from '../../../../src/publicdata/values.js';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { addr, importOk } from '../../fixtures.js';

/** 23 grants: every fifth inactive (19 active), odd ids `tech`, even ids `community`. */
const GRANTS = Array.from({ length: 23 }, (_, i) => {
  const id = i + 1;
  return {
    id,
    title: `Grant ${id}`,
    description: `Grant number ${id}.`,
    admin_address: addr('a1', id),
    grant_type: id % 2 === 1 ? 'tech' : 'community',
    active: id % 5 !== 0,
  };
});
const ACTIVE = GRANTS.filter((g) => g.active).map((g) => g.id);
const ACTIVE_TECH = GRANTS.filter((g) => g.active && g.grant_type === 'tech').map((g) => g.id);

const NEXT = /^<([^>]+)>; rel="next"$/;

describe.each(databaseKinds)('GET /api/v0.1/grants/ paging headers on %s', (kind) => {
  let t: TestApp;
  let origin: string;
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    await importOk(t.ctx, { grants: GRANTS });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => t.close());

  /** One page over HTTP: the ids, `X-Total-Count` and the next link (absent: null). */
  const page = async (url: string) => {
    const res = await fetch(url);
    expect(res.status, url).toBe(200);
    const ids = ((await res.json()) as { id: number }[]).map((g) => g.id);
    return { ids, total: res.headers.get('x-total-count'), link: res.headers.get('link') };
  };
  const list = (query: string) => page(`${origin}/api/v0.1/grants/${query}`);

  it('counts every match of the filters in X-Total-Count, whatever the page', async () => {
    expect(ACTIVE).toHaveLength(19);
    expect(await list('')).toEqual({ ids: ACTIVE, total: '19', link: null });
    expect((await list('?limit=5')).total).toBe('19');
    expect((await list('?limit=5&offset=5')).total).toBe('19');
    expect((await list('?grant_type=tech&limit=4')).total).toBe(String(ACTIVE_TECH.length));
    expect((await list('?keyword=number%201&limit=2')).total).toBe(String(ACTIVE.filter((id) => String(id).startsWith('1')).length));
    // Past the end and with limit=0 the page cannot give the total: it is counted.
    expect(await list('?limit=5&offset=40')).toEqual({ ids: [], total: '19', link: null });
    expect(await list('?limit=0')).toEqual({ ids: [], total: '19', link: null });
    expect(await list('?pk=5')).toEqual({ ids: [], total: '0', link: null });
  });

  it('links the next page while more remain, and not from the last page', async () => {
    const first = await list('?grant_type=tech&limit=3');
    expect(first.ids).toEqual(ACTIVE_TECH.slice(0, 3));
    expect(first.link).toBe(`<${origin}/api/v0.1/grants/?grant_type=tech&limit=3&offset=3>; rel="next"`);
    expect((await list('?limit=5&offset=10')).link).toBe(`<${origin}/api/v0.1/grants/?limit=5&offset=15>; rel="next"`);
    // The last page: short, or exactly full.
    expect(await list('?limit=5&offset=15')).toEqual({ ids: ACTIVE.slice(15), total: '19', link: null });
    expect((await list('?limit=19')).link).toBeNull();
    expect((await list('?limit=4&offset=15')).link).toBeNull();
    expect((await list('?limit=4&offset=14')).link).not.toBeNull();
  });

  it.each([
    ['', ACTIVE, 4],
    ['grant_type=tech&', ACTIVE_TECH, 3],
    ['keyword=GRANT&', ACTIVE, 7],
  ])('a client following Link from ?%slimit=… collects every grant exactly once', async (filter, expected, limit) => {
    const seen: number[] = [];
    let url: string | null = `${origin}/api/v0.1/grants/?${filter}limit=${limit}`;
    let pages = 0;
    while (url !== null && pages < 50) {
      const { ids, total, link } = await page(url);
      expect(total).toBe(String(expected.length));
      seen.push(...ids);
      pages += 1;
      url = link === null ? null : NEXT.exec(link)![1]!;
    }
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / limit));
  });

  it('writes the link as the bounty list does, from the request host when PUBLIC_BASE_URL is unset', async () => {
    const headers = { host: 'lists.example.com' };
    const grants = await t.app.inject({ url: '/api/v0.1/grants/?limit=2&offset=2', headers });
    expect(grants.headers.link).toBe('<http://lists.example.com/api/v0.1/grants/?limit=2&offset=4>; rel="next"');
    // The bounty list (empty here) answers the same headers for the same paging.
    const bounties = await t.app.inject({ url: '/api/v0.1/bounties/?limit=2&offset=2', headers });
    expect(bounties.headers['x-total-count']).toBe('0');
    expect(bounties.headers.link).toBeUndefined();
  });
});

describe.each(databaseKinds)('GET /api/v0.1/grants/ with PUBLIC_BASE_URL and more grants than a count reads, on %s', (kind) => {
  let t: TestApp;
  const many = COUNT_AHEAD + 20;
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_BASE_URL: 'https://data.example.org/', PUBLIC_CACHE_TTL: '0' });
    const grants = Array.from({ length: many }, (_, i) => ({ ...GRANTS[0]!, id: i + 1, title: `Grant ${i + 1}`, active: true }));
    await importOk(t.ctx, { grants });
  }, 60_000);
  afterAll(async () => t.close());

  it('links the next page under PUBLIC_BASE_URL, not the request host', async () => {
    const res = await t.app.inject({ url: '/api/v0.1/grants/?grant_type=tech&limit=3&offset=3', headers: { host: 'internal:8000' } });
    expect(res.headers.link).toBe('<https://data.example.org/api/v0.1/grants/?grant_type=tech&limit=3&offset=6>; rel="next"');
  });

  it('counts at most COUNT_AHEAD past the page, as the bounty list does, and exactly near the end', async () => {
    const first = await t.app.inject('/api/v0.1/grants/?limit=10');
    expect(first.headers['x-total-count']).toBe(String(10 + COUNT_AHEAD));
    expect(first.headers.link).toBe('<https://data.example.org/api/v0.1/grants/?limit=10&offset=10>; rel="next"');
    const last = await t.app.inject(`/api/v0.1/grants/?limit=10&offset=${many - 10}`);
    expect((last.json() as unknown[]).length).toBe(10);
    expect(last.headers['x-total-count']).toBe(String(many));
    expect(last.headers.link).toBeUndefined();
  });
});
