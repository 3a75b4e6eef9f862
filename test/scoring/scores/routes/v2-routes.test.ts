import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createV2Services } from '../../../../src/scoring/scores/v2.module.js';
import { stampsRepository } from '../../../../src/scoring/stamps/stamps.repository.js';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { giveStamps, testWallet } from '../../../helpers/stamps.js';

const day = 86_400_000;
const alice = testWallet(1601).address;
const nobody = testWallet(1602).address;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

describe.each(databaseKinds)('v2 routes on %s', (kind) => {
  let t: TestApp;
  let scorerId: number;
  let accountId: number;
  let key: string;
  let historyKey: string;
  let now: number;

  beforeEach(async () => {
    t = await createTestApp(kind);
    const account = await t.ctx.accounts.createAccount('v2');
    accountId = account.id;
    scorerId = (await t.ctx.accounts.createScorer(account.id, { name: 'v2', weights: { Google: '12.345675', Discord: '8' } })).id;
    key = (await t.ctx.apiKeys.create(account.id)).key;
    historyKey = (await t.ctx.apiKeys.create(account.id, { permissions: ['read_scores', 'historical_endpoint'] })).key;
    // The v2 services on a clock the test moves (the routes read ctx.v2 at request time).
    now = Date.UTC(2026, 0, 10, 10, 0, 0);
    const { ctx } = t;
    (ctx as { v2: unknown }).v2 = createV2Services(
      ctx.database,
      { stamps: stampsRepository(ctx.database), issuers: ctx.issuers, catalogue: ctx.catalogue, accounts: ctx.accounts },
      () => now,
    );
  });
  afterEach(async () => t.close());

  const get = (url: string, apiKey = key) => t.app.inject({ url, headers: { 'x-api-key': apiKey } });
  const history = (createdAt: string, apiKey = historyKey) =>
    get(`/v2/stamps/${scorerId}/score/${alice}/history?created_at=${encodeURIComponent(createdAt)}`, apiKey);

  it('scores without a submission, and v1 reads the same score', async () => {
    await giveStamps(t.ctx, alice, ['Google', 'Discord']);
    const res = await get(`/v2/stamps/${scorerId}/score/${alice.toUpperCase().replace('0X', '0x')}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      address: alice,
      score: '20.34568',
      passing_score: true,
      threshold: '20.00000',
      last_score_timestamp: iso(now),
      error: null,
      points_data: null,
      possible_points_data: null,
    });
    expect(Object.keys(body).sort()).toEqual(
      ['address', 'error', 'expiration_timestamp', 'last_score_timestamp', 'passing_score', 'points_data', 'possible_points_data', 'score', 'stamps', 'threshold'],
    );
    expect(body.stamps.Google).toMatchObject({ score: '12.34568', dedup: false });
    const v1 = await get(`/registry/score/${scorerId}/${alice}`);
    expect(v1.statusCode).toBe(200);
    expect(v1.json()).toMatchObject({ status: 'DONE', score: '20.34568', last_score_timestamp: iso(now), stamp_scores: { Google: '12.34568', Discord: '8.00000' } });
  });

  it('history before, between and after two scorings, in date and date-time forms', async () => {
    await giveStamps(t.ctx, alice, ['Google']);
    const first = now;
    expect((await get(`/v2/stamps/${scorerId}/score/${alice}`)).json().score).toBe('12.34568');
    now += day / 2;
    // Nothing changed: no event, so history still shows the first scoring's time.
    expect((await get(`/v2/stamps/${scorerId}/score/${alice}`)).statusCode).toBe(200);
    await giveStamps(t.ctx, alice, ['Discord']);
    now = first + 2 * day;
    const second = now;
    expect((await get(`/v2/stamps/${scorerId}/score/${alice}`)).json().score).toBe('20.34568');

    for (const before of [dateOf(first - day), iso(first - 1)]) {
      const res = await history(before);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'score_not_found', address: alice });
    }
    for (const between of [dateOf(first), iso(first), dateOf(first + day), iso(second - 1)]) {
      const res = await history(between);
      expect(res.statusCode, between).toBe(200);
      expect(res.json()).toMatchObject({ score: '12.34568', last_score_timestamp: iso(first), passing_score: false });
      expect(Object.keys(res.json().stamps)).toEqual(['Google']);
    }
    for (const after of [iso(second), dateOf(second), '2030-01-01', '2030-01-01T00:00:00Z']) {
      const res = await history(after);
      expect(res.statusCode, after).toBe(200);
      expect(res.json()).toMatchObject({ score: '20.34568', last_score_timestamp: iso(second), passing_score: true });
    }
    // History never scores: an address never scored stays not found.
    const unscored = await get(`/v2/stamps/${scorerId}/score/${nobody}/history?created_at=2030-01-01`, historyKey);
    expect(unscored.json()).toMatchObject({ code: 'score_not_found', address: nobody });
    expect(await t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', nobody).execute()).toEqual([]);
  });

  it('a scorer whose settings cannot be used answers 200 with error, records ERROR, and v1 shows it', async () => {
    await giveStamps(t.ctx, alice, ['Google']);
    await t.ctx.database.db.updateTable('scorers').set({ weights: '{"Google":"not a number"}' }).where('id', '=', scorerId).execute();
    const res = await get(`/v2/stamps/${scorerId}/score/${alice}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ score: '0.00000', passing_score: false, threshold: '20.00000', stamps: {}, expiration_timestamp: null });
    expect(res.json().error).toMatch(/settings cannot be used/);
    expect((await get(`/registry/score/${scorerId}/${alice}`)).json()).toMatchObject({ status: 'ERROR', score: null, error: res.json().error });
    // The same failure again is no change: one ERROR event.
    expect((await get(`/v2/stamps/${scorerId}/score/${alice}`)).statusCode).toBe(200);
    const events = await t.ctx.database.db.selectFrom('score_events').select(['status', 'error']).execute();
    expect(events).toEqual([{ status: 'ERROR', error: res.json().error }]);
  });

  it('refuses bad created_at with invalid_timestamp', async () => {
    for (const bad of ['yesterday', '2026-02-30', '2026-13-01T00:00:00Z', '']) {
      const res = await history(bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().code, bad).toBe('invalid_timestamp');
    }
    const missing = await get(`/v2/stamps/${scorerId}/score/${alice}/history`, historyKey);
    expect(missing.statusCode).toBe(400);
  });

  it('permissions: history needs historical_endpoint, scoring needs read_scores; refused requests write nothing', async () => {
    await giveStamps(t.ctx, alice, ['Google']);
    const noHistory = await history('2030-01-01', key);
    expect(noHistory.statusCode).toBe(403);
    expect(noHistory.json().code).toBe('permission_denied');
    const submitOnly = (await t.ctx.apiKeys.create(accountId, { permissions: ['submit_passports'] })).key;
    for (const url of [`/v2/stamps/${scorerId}/score/${alice}`, `/v2/stamps/${alice}`, '/v2/stamps/metadata']) {
      const res = await get(url, submitOnly);
      expect(res.statusCode, url).toBe(403);
    }
    expect(await t.ctx.database.db.selectFrom('score_events').selectAll().execute()).toEqual([]);
    expect((await get(`/v2/stamps/${scorerId}/score/${alice}`, historyKey)).statusCode).toBe(200);
  });

  it('a scorer of another account, or none, is 404 scorer_not_found; a bad address is 400', async () => {
    const other = await t.ctx.accounts.createAccount('other');
    const otherKey = (await t.ctx.apiKeys.create(other.id, { permissions: ['read_scores', 'historical_endpoint'] })).key;
    for (const url of [`/v2/stamps/${scorerId}/score/${alice}`, `/v2/stamps/${scorerId}/score/${alice}/history?created_at=2030-01-01`, `/v2/stamps/999999/score/${alice}`]) {
      const res = await get(url, otherKey);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code).toBe('scorer_not_found');
    }
    const bad = await get(`/v2/stamps/${scorerId}/score/0x1234`);
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'invalid_address']);
  });

  it('stamps pages and the catalogue under v2', async () => {
    await giveStamps(t.ctx, alice, ['Google', 'Discord', 'Ens']);
    const first = await get(`/v2/stamps/${alice}?limit=2&include_metadata=true`);
    expect(first.statusCode).toBe(200);
    const page = first.json();
    expect(page.items).toHaveLength(2);
    expect(page.items[0]).toMatchObject({ version: '1.0.0', credential: { credentialSubject: { id: `did:pkh:eip155:1:${alice}` } } });
    expect(page.items[0]).toHaveProperty('metadata');
    expect(page.prev).toBeNull();
    expect(page.next).toMatch(new RegExp(`/v2/stamps/${alice}\\?limit=2&token=.+&include_metadata=true$`));
    const second = await get(page.next.replace(/^https?:\/\/[^/]+/, ''));
    expect(second.json().items).toHaveLength(1);
    expect(second.json().next).toBeNull();
    const providers = [...page.items, ...second.json().items].map((i: any) => i.credential.credentialSubject.provider).sort();
    expect(providers).toEqual(['Discord', 'Ens', 'Google']);

    const metadata = await get('/v2/stamps/metadata');
    expect(metadata.statusCode).toBe(200);
    expect(metadata.json()).toEqual((await get('/registry/stamp-metadata')).json());
  });

  it('documents every v2 route under the tag v2 with examples', async () => {
    const spec = (await t.app.inject({ url: '/openapi.json' })).json();
    const v2 = Object.entries(spec.paths as Record<string, Record<string, any>>).filter(([path]) => path.startsWith('/v2/stamps'));
    expect(v2.map(([path]) => path).sort()).toEqual([
      '/v2/stamps/metadata',
      '/v2/stamps/{address}',
      '/v2/stamps/{scorer_id}/score/{address}',
      '/v2/stamps/{scorer_id}/score/{address}/attestation',
      '/v2/stamps/{scorer_id}/score/{address}/history',
      '/v2/stamps/{scorer_id}/scores',
    ]);
    for (const [, methods] of v2) expect((methods.get ?? methods.post).tags).toEqual(['v2']);
    const scoreSchema = v2.find(([path]) => path === '/v2/stamps/{scorer_id}/score/{address}')![1].get.responses['200'].content['application/json'].schema;
    // OpenAPI 3.1: JSON Schema's `examples` list.
    expect(scoreSchema.properties.score.examples).toEqual(['21.75400']);
    expect(scoreSchema.properties.stamps.examples[0].Ens).toMatchObject({ score: '0.00000', dedup: true });
  });
});
