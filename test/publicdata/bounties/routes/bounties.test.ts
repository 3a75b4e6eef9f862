import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BountySchema } from '../../../../src/publicdata/bounties/bounty.schema.js';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { addr, bountyFixtures, importOk } from '../../fixtures.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(databaseKinds)('GET /api/v0.1/bounties/ on %s', (kind) => {
  let t: TestApp;
  // The list is read-only here, so one app serves every test; caching is off so that each request hits SQL.
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    await importOk(t.ctx, { bounties: bountyFixtures() });
  });
  afterAll(async () => t.close());

  const get = (query: string, headers: Record<string, string> = {}) => t.app.inject({ url: `/api/v0.1/bounties/${query}`, headers });
  const ids = async (query: string) => {
    const res = await get(query);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { pk: number }[]).map((b) => b.pk);
  };

  it('lists every bounty, newest web3_created first, each matching the documented schema', async () => {
    const res = await get('');
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>[];
    expect(body.map((b) => b.pk)).toEqual([6, 5, 4, 3, 2, 1]);
    for (const bounty of body) expect(Value.Errors(BountySchema, bounty).First()).toBeUndefined();
  });

  it('renders money exactly, dates as ISO 8601 with milliseconds and Z, and an absolute url', async () => {
    const before = Date.now();
    const [four] = (await get('?pk=4')).json();
    const [two] = (await get('?pk=2')).json();
    expect(four.value_in_token).toBe('1000000000000000000000');
    expect(four.value_in_eth).toBeNull();
    expect(two.value_in_token).toBe('9');
    expect(two.value_in_eth).toBe(1.25);
    for (const field of ['created_on', 'modified_on', 'web3_created', 'expires_date', 'now']) expect(two[field]).toMatch(DATE_TIME);
    expect(two.web3_created).toBe('2026-01-02T10:00:00.000Z');
    expect(Date.parse(two.now)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(two.now)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(two.url).toBe('http://localhost:80/api/v0.1/bounties/?pk=2');
    expect(two.bounty_owner_address).toBe(addr('aa', 2));
    expect(two.github_org_name).toBe('org');
    expect(two.github_issue_number).toBe('2');
    expect(four.fulfiller_metadata).toEqual({ githubUsername: 'erin' });
    expect(two.fulfiller_metadata).toEqual({});
    expect(four.paid).toEqual(['erin']);
  });

  it('builds url from the request host when PUBLIC_BASE_URL is unset', async () => {
    const [bounty] = (await get('?pk=1', { host: 'bounties.example.com' })).json();
    expect(bounty.url).toBe('http://bounties.example.com/api/v0.1/bounties/?pk=1');
  });

  it('keeps status and is_open consistent', async () => {
    for (const b of (await get('')).json()) expect(b.is_open).toBe(['open', 'started', 'submitted'].includes(b.status));
  });

  describe('text filters: case-insensitive substrings, comma = any of', () => {
    it.each([
      ['experience_level=beginner', [4, 1]],
      ['experience_level=BEGIN', [4, 1]],
      ['experience_level=inter', [6, 2]],
      ['experience_level=begin,Advanced', [4, 3, 1]],
      ['experience_level=begin,,', [4, 1]],
      ['experience_level=nobody', []],
      ['project_length=day', [5, 2]],
      ['project_length=HOURS,weeks', [6, 3, 1]],
      ['bounty_type=bug', [4, 1]],
      ['bounty_type=FEATURE', [5, 2]],
      ['bounty_type=bug,doc', [6, 4, 1]],
      ['bounty_type=%25', []],
      ['bounty_type=_', []],
      ['bounty_owner_address=0xAAAA', [2, 1]],
      ['bounty_owner_address=bbbb', [4, 3]],
      [`bounty_owner_address=${addr('aa', 1).toUpperCase()},cccc`, [6, 5, 1]],
    ])('%s', async (query, expected) => {
      expect(await ids(`?${query}`)).toEqual(expected);
    });

    it('combines different filters with AND', async () => {
      expect(await ids('?experience_level=inter&project_length=hours')).toEqual([6]);
      expect(await ids('?bounty_type=bug&is_open=false')).toEqual([4]);
    });
  });

  describe('github_url: exact, comma = any of', () => {
    it.each([
      ['https://github.com/org/repo/issues/3', [3]],
      ['https://github.com/org/repo/issues/', []],
      ['HTTPS://GITHUB.COM/ORG/REPO/ISSUES/3', []],
      ['https://github.com/org/repo/issues/1,https://github.com/org/repo/issues/6', [6, 1]],
    ])('%s', async (url, expected) => {
      expect(await ids(`?github_url=${encodeURIComponent(url)}`)).toEqual(expected);
    });
  });

  describe('is_open', () => {
    it.each([
      ['true', [6, 3, 2, 1]],
      ['TRUE', [6, 3, 2, 1]],
      ['False', [5, 4]],
    ])('is_open=%s', async (value, expected) => {
      expect(await ids(`?is_open=${value}`)).toEqual(expected);
    });
  });

  describe('pk', () => {
    it('returns the one bounty, or an empty array', async () => {
      expect(await ids('?pk=3')).toEqual([3]);
      expect(await ids('?pk=99')).toEqual([]);
      expect(await ids('?pk=3&is_open=false')).toEqual([]);
    });
  });

  describe('order_by', () => {
    it.each([
      ['pk', [1, 2, 3, 4, 5, 6]],
      ['-pk', [6, 5, 4, 3, 2, 1]],
      ['web3_created', [1, 2, 3, 4, 5, 6]],
      ['-web3_created', [6, 5, 4, 3, 2, 1]],
      // Code-point order on both databases: capitals first.
      ['title', [1, 5, 3, 2, 4, 6]],
      ['-title', [6, 4, 2, 3, 5, 1]],
      // Numeric order of exact decimals, not text order.
      ['value_in_token', [5, 2, 1, 6, 3, 4]],
      ['-value_in_token', [4, 3, 6, 1, 2, 5]],
      // No value sorts last in both directions.
      ['value_in_eth', [3, 1, 6, 2, 5, 4]],
      ['-value_in_eth', [5, 2, 6, 1, 3, 4]],
      // Ties go by pk in the same direction.
      ['status', [4, 5, 1, 6, 2, 3]],
      ['-status', [3, 2, 6, 1, 5, 4]],
      ['is_open', [4, 5, 1, 2, 3, 6]],
      ['-is_open', [6, 3, 2, 1, 5, 4]],
    ])('order_by=%s', async (order, expected) => {
      expect(await ids(`?order_by=${order}`)).toEqual(expected);
    });

    it('orders after filtering', async () => {
      expect(await ids('?is_open=true&order_by=-value_in_eth')).toEqual([2, 6, 1, 3]);
    });

    it.each(['bogus', '-', 'interested_count', 'value_in_eth_sort', '--pk', 'constructor'])('refuses order_by=%s with 400 invalid_parameter', async (order) => {
      const res = await get(`?order_by=${order}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ detail: expect.stringContaining('order_by must be one of'), code: 'invalid_parameter' });
    });
  });

  describe('limit and offset', () => {
    it('pages in the chosen order', async () => {
      expect(await ids('?limit=2&offset=1')).toEqual([5, 4]);
      expect(await ids('?limit=2&offset=1&order_by=pk')).toEqual([2, 3]);
      expect(await ids('?limit=0')).toEqual([]);
      expect(await ids('?offset=10')).toEqual([]);
    });
  });

  describe('bad values of known parameters → 400 with the standard body; unknown parameters ignored', () => {
    it.each([
      ['is_open=yes', 'invalid_parameter'],
      ['experience_level=%00', 'invalid_parameter'],
      ['github_url=a%00b', 'invalid_parameter'],
      ['bounty_owner_address=0x%00', 'invalid_parameter'],
      ['pk=abc', 'invalid_request'],
      ['pk=0', 'invalid_request'],
      ['pk=1e400', 'invalid_request'],
      ['pk=2147483648', 'invalid_request'],
      ['offset=1e400', 'invalid_offset'],
      ['offset=100000000000000000000', 'invalid_offset'],
      ['limit=1e400', 'invalid_limit'],
      ['limit=1001', 'invalid_limit'],
      ['limit=-1', 'invalid_limit'],
      ['offset=-1', 'invalid_offset'],
      [`bounty_type=${Array.from({ length: 51 }, (_, i) => `t${i}`).join(',')}`, 'invalid_parameter'],
      // The substring filters' alternatives together, and raw_data's few short texts, bound the LIKEs a request runs.
      [`bounty_type=${Array.from({ length: 11 }, (_, i) => `t${i}`).join(',')}`, 'invalid_parameter'],
      [`experience_level=a,b,c,d&project_length=e,f,g&bounty_type=h,i,j&bounty_owner_address=0xk`, 'invalid_parameter'],
      ['raw_data=a,b,c,d', 'invalid_parameter'],
      [`raw_data=${'x'.repeat(65)}`, 'invalid_parameter'],
      [`raw_data=gas,${'y'.repeat(65)}`, 'invalid_parameter'],
    ])('%s → %s', async (query, code) => {
      const res = await get(`?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ detail: expect.any(String), code });
    });

    it('takes the most substring alternatives and raw_data texts it allows', async () => {
      expect(await ids(`?experience_level=a,b,c&project_length=d,e,f&bounty_type=g,h,i&bounty_owner_address=0x`)).toEqual([3]);
      expect(await ids(`?experience_level=${Array.from({ length: 9 }, (_, i) => `zz${i}`).join(',')},beginner`)).toEqual([4, 1]);
      for (const query of [`?raw_data=a,b,c`, `?raw_data=${'x'.repeat(64)}`, `?raw_data=${'x'.repeat(64)},b,c`]) {
        const res = await get(query);
        expect(res.statusCode, query).toBe(200);
        expect(res.headers['x-total-count'], query).toBe('0');
      }
    });

    it('ignores unknown parameters', async () => {
      expect(await ids('?foo=bar&status=done&format=json')).toEqual([6, 5, 4, 3, 2, 1]);
    });
  });
});

describe('GET /api/v0.1/bounties/ with PUBLIC_BASE_URL', () => {
  it('builds url from PUBLIC_BASE_URL', async () => {
    const t = await createTestApp('sqlite', { PUBLIC_BASE_URL: 'https://data.example.org/' });
    try {
      await importOk(t.ctx, { bounties: bountyFixtures().slice(0, 1) });
      const [bounty] = (await t.app.inject({ url: '/api/v0.1/bounties/', headers: { host: 'internal:8000' } })).json();
      expect(bounty.url).toBe('https://data.example.org/api/v0.1/bounties/?pk=1');
    } finally {
      await t.close();
    }
  });
});
