import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
const base = Date.UTC(2026, 2, 1, 12, 0, 0);

describe.each(databaseKinds)('score endpoints on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let scorerId: number;
  let accountId: number;

  async function get(url: string, apiKey = key) {
    return t.app.inject({ url, headers: { 'x-api-key': apiKey } });
  }

  /** Ten scored addresses 1..10 with timestamps base+1s … base+10s, inserted out of order. */
  async function seedScores() {
    const rows = [7, 3, 10, 1, 5, 9, 2, 8, 4, 6].map((n) => ({
      scorer_id: scorerId,
      address: addressNo(n),
      status: 'DONE' as const,
      score: `${n}.00000`,
      evidence: null,
      error: null,
      last_score_timestamp: base + n * 1000,
    }));
    await t.ctx.database.db.insertInto('scores').values(rows).execute();
  }

  beforeEach(async () => {
    t = await createTestApp(kind);
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
    accountId = seeded.account.id;
    await seedScores();
  });
  afterEach(async () => t.close());

  describe('GET /registry/score/{scorer_id}/{address}', () => {
    it('returns one item and count 1, with the record repeated at the top level, for an address in any case', async () => {
      await t.ctx.database.db
        .updateTable('scores')
        .set({ stamp_scores: '{"Google":"0.52500","X":"9.47500"}', expiration_date: base + 86_400_000 })
        .where('address', '=', addressNo(10))
        .execute();
      const res = await get(`/registry/score/${scorerId}/${addressNo(10).toUpperCase().replace('0X', '0x')}`);
      expect(res.statusCode).toBe(200);
      const record = {
        address: addressNo(10),
        score: '10.00000',
        status: 'DONE',
        last_score_timestamp: iso(base + 10_000),
        expiration_date: iso(base + 86_400_000),
        evidence: null,
        error: null,
        stamp_scores: { Google: '0.52500', X: '9.47500' },
      };
      expect(res.json()).toEqual({ ...record, items: [record], count: 1 });
    });

    it('answers a settled row stored before the full record existed with {} and a null expiration_date', async () => {
      const res = await get(`/registry/score/${scorerId}/${addressNo(3)}`);
      expect(res.json()).toMatchObject({ status: 'DONE', stamp_scores: {}, expiration_date: null });
      expect(res.json().items[0]).toMatchObject({ stamp_scores: {}, expiration_date: null });
    });

    it('answers null stamp_scores and expiration_date while PROCESSING', async () => {
      await t.ctx.jobs.enqueue(scorerId, addressNo(4), Date.now());
      const body = (await get(`/registry/score/${scorerId}/${addressNo(4)}`)).json();
      expect(body).toMatchObject({ status: 'PROCESSING', score: null, stamp_scores: null, expiration_date: null });
      expect(body.items).toEqual([expect.objectContaining({ status: 'PROCESSING', stamp_scores: null, expiration_date: null })]);
    });

    it.each([
      ['an address never submitted', () => `/registry/score/${scorerId}/${addressNo(99)}`, 404, 'not_submitted'],
      ['an unknown scorer', () => `/registry/score/424242/${addressNo(1)}`, 404, 'scorer_not_found'],
      ['a malformed address', () => `/registry/score/${scorerId}/0xnothex`, 400, 'invalid_address'],
      ['a malformed scorer id', () => `/registry/score/abc/${addressNo(1)}`, 400, 'invalid_request'],
    ])('answers %s with %i %s', async (_what, url, status, code) => {
      const res = await get(url());
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ detail: expect.any(String), code });
    });

    it('hides another account’s scorer as not found', async () => {
      const stranger = await seedAccount(t.ctx);
      const res = await get(`/registry/score/${scorerId}/${addressNo(1)}`, stranger.key);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('scorer_not_found');
    });

    it('needs the read_scores permission', async () => {
      const { key: submitOnly } = await t.ctx.apiKeys.create(accountId, { canRead: false });
      const res = await get(`/registry/score/${scorerId}/${addressNo(1)}`, submitOnly);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('permission_denied');
    });
  });

  describe('GET /registry/score/{scorer_id}', () => {
    const numbers = (body: { items: { address: string }[] }) => body.items.map((i) => parseInt(i.address, 16));

    it('lists every score ordered by timestamp then address, with the total count', async () => {
      const body = (await get(`/registry/score/${scorerId}`)).json();
      expect(numbers(body)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(body.count).toBe(10);
    });

    it('breaks timestamp ties by address', async () => {
      await t.ctx.database.db.updateTable('scores').set({ last_score_timestamp: base }).execute();
      expect(numbers((await get(`/registry/score/${scorerId}`)).json())).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });

    it('pages with limit and offset (offset=5&limit=3 gives elements 6-8) and counts across pages', async () => {
      const body = (await get(`/registry/score/${scorerId}?offset=5&limit=3`)).json();
      expect(numbers(body)).toEqual([6, 7, 8]);
      expect(body.count).toBe(10);
      expect(numbers((await get(`/registry/score/${scorerId}?limit=0`)).json())).toEqual([]);
      expect(numbers((await get(`/registry/score/${scorerId}?offset=20`)).json())).toEqual([]);
    });

    it('takes empty optional parameters as not given: the defaults apply', async () => {
      const body = (await get(`/registry/score/${scorerId}?limit=&offset=&address=&last_score_timestamp_gt=`)).json();
      expect(numbers(body)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(body.count).toBe(10);
    });

    it.each([
      ['last_score_timestamp_gt', [6, 7, 8, 9, 10]],
      ['last_score_timestamp__gt', [6, 7, 8, 9, 10]],
      ['last_score_timestamp_gte', [5, 6, 7, 8, 9, 10]],
      ['last_score_timestamp__gte', [5, 6, 7, 8, 9, 10]],
    ])('filters with %s', async (name, expected) => {
      const at = encodeURIComponent(iso(base + 5000));
      const body = (await get(`/registry/score/${scorerId}?${name}=${at}`)).json();
      expect(numbers(body)).toEqual(expected);
      expect(body.count).toBe(expected.length);
    });

    it('reads timestamps in other offsets, with Z, and with an unencoded + (arriving as a space)', async () => {
      const plusTwo = '2026-03-01T14:00:05.000+02:00';
      expect(numbers((await get(`/registry/score/${scorerId}?last_score_timestamp_gt=${encodeURIComponent(plusTwo)}`)).json())).toEqual([6, 7, 8, 9, 10]);
      expect(numbers((await get(`/registry/score/${scorerId}?last_score_timestamp_gte=2026-03-01T12:00:09Z`)).json())).toEqual([9, 10]);
      expect(numbers((await get(`/registry/score/${scorerId}?last_score_timestamp_gte=2026-03-01T12:00:09+00:00`)).json())).toEqual([9, 10]);
    });

    it('combines filters with paging', async () => {
      const at = encodeURIComponent(iso(base + 2000));
      const body = (await get(`/registry/score/${scorerId}?last_score_timestamp_gt=${at}&limit=2&offset=1`)).json();
      expect(numbers(body)).toEqual([4, 5]);
      expect(body.count).toBe(8);
    });

    it('filters by exact address, any case', async () => {
      const body = (await get(`/registry/score/${scorerId}?address=${addressNo(4).replace('0x', '0X').toUpperCase().replace('0X', '0x')}`)).json();
      expect(numbers(body)).toEqual([4]);
      expect(body.count).toBe(1);
    });

    it('keeps other scorers’ scores out', async () => {
      const second = await t.ctx.accounts.createScorer(accountId, { name: 'second' });
      const body = (await get(`/registry/score/${second.id}`)).json();
      expect(body).toEqual({ items: [], count: 0 });
    });

    it.each([
      ['limit=1001', 'invalid_limit'],
      ['limit=-1', 'invalid_limit'],
      ['limit=ten', 'invalid_limit'],
      ['offset=-3', 'invalid_offset'],
      ['offset=1.5', 'invalid_offset'],
      ['last_score_timestamp_gt=yesterday', 'invalid_timestamp'],
      ['last_score_timestamp_gte=2026-13-45T99:00:00Z', 'invalid_timestamp'],
      ['last_score_timestamp__gt=1700000000', 'invalid_timestamp'],
      ['address=0x12', 'invalid_address'],
    ])('refuses %s with 400 %s', async (query, code) => {
      const res = await get(`/registry/score/${scorerId}?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ detail: expect.any(String), code });
    });

    it('answers 404 for an unknown or foreign scorer and 403 without read_scores', async () => {
      expect((await get('/registry/score/777777')).json().code).toBe('scorer_not_found');
      const stranger = await seedAccount(t.ctx);
      expect((await get(`/registry/score/${scorerId}`, stranger.key)).statusCode).toBe(404);
      const { key: submitOnly } = await t.ctx.apiKeys.create(accountId, { canRead: false });
      expect((await get(`/registry/score/${scorerId}`, submitOnly)).statusCode).toBe(403);
    });
  });
});
