import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { giveStamps } from '../../helpers/stamps.js';
import { waitFor } from '../../helpers/processes.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');

describe.each(databaseKinds)('batch scoring on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let scorerId: number;
  let accountId: number;

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}, apiKey = key) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { 'x-api-key': apiKey, ...(typeof payload === 'string' ? { 'content-type': 'text/csv' } : {}), ...headers },
      payload: payload as string,
    });
  const get = (url: string, headers: Record<string, string> = {}, apiKey = key) =>
    t.app.inject({ url, headers: { 'x-api-key': apiKey, ...headers } });

  async function runBatchToEnd(id: string) {
    t.ctx.batches.worker.start();
    await waitFor(`batch ${id} done`, 30_000, async () => (await get(`/v2/batches/${id}`)).json().status === 'DONE', 20);
  }

  beforeEach(async () => {
    t = await createTestApp(kind, { BATCH_CHUNK_SIZE: '3', BATCH_POLL_MS: '20', BATCH_DAILY_ADDRESSES: '20,30,40,50', BATCH_SYNC_MAX_ADDRESSES: '5' });
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
    accountId = seeded.account.id;
  });
  afterEach(async () => t.close());

  it('queues a JSON batch (202, Location), scores every address once and streams results in input order, matching single v2 reads', async () => {
    await giveStamps(t.ctx, addressNo(2), ['Google', 'Ens']);
    await giveStamps(t.ctx, addressNo(5), ['Github']);
    const addresses = [1, 2, 3, 2, 5, 6, 7].map(addressNo);
    const created = await post(`/v2/scorers/${scorerId}/batches`, { addresses: addresses.map((a, i) => (i === 0 ? a.toUpperCase().replace('0X', '0x') : a)) });
    expect(created.statusCode).toBe(202);
    const batch = created.json();
    expect(batch).toMatchObject({ status: 'PENDING', total: 7, done: 0, failed: 0, scorer_id: scorerId, finished_at: null });
    expect(created.headers.location).toBe(`/v2/batches/${batch.id}`);
    await runBatchToEnd(batch.id);
    expect((await get(`/v2/batches/${batch.id}`)).json()).toMatchObject({ status: 'DONE', total: 7, done: 7, failed: 0 });
    expect((await t.app.inject({ url: '/metrics' })).body).toMatch(/^stampgate_batch_addresses_scored_total\{outcome="done"\} 7$/m);

    const results = await get(`/v2/batches/${batch.id}/results`);
    expect(results.statusCode).toBe(200);
    expect(results.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = results.body.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.address)).toEqual(addresses);
    expect(lines[1].score).not.toBe(lines[0].score);
    expect(Object.keys(lines[1].stamps).sort()).toEqual(['Ens', 'Google']);
    // Address by address, the same object the v2 read answers now (nothing changed since, so
    // nothing is re-scored and the timestamps agree too).
    for (const line of lines) {
      const single = await get(`/v2/stamps/${scorerId}/score/${line.address}`);
      expect(single.statusCode).toBe(200);
      expect(line).toEqual(single.json());
    }
    expect((await t.ctx.v2.scores.scoreNow(scorerId, accountId, addressNo(2))).written).toBe(false);
    // Each distinct address was scored exactly once: one event each, the duplicate included.
    const events = await t.ctx.database.db.selectFrom('score_events').select(['address']).where('scorer_id', '=', scorerId).execute();
    expect(events.map((e) => e.address).sort()).toEqual([...new Set(addresses)].sort());
  });

  it('accepts a CSV body with a header and streams CSV with Accept: text/csv; offset resumes', async () => {
    const csv = `address\r\n${addressNo(1)}\r\n\r\n"${addressNo(2)}"\r\n${addressNo(3)}`;
    const created = await post(`/v2/scorers/${scorerId}/batches`, csv);
    expect(created.statusCode).toBe(202);
    const { id } = created.json();
    await runBatchToEnd(id);
    const results = await get(`/v2/batches/${id}/results`, { accept: 'text/csv' });
    expect(results.headers['content-type']).toMatch(/text\/csv/);
    const rows = results.body.trimEnd().split('\n');
    expect(rows[0]).toBe('address,score,passing_score,threshold,error');
    expect(rows.slice(1).map((row) => row.split(',')[0])).toEqual([1, 2, 3].map(addressNo));
    const resumed = (await get(`/v2/batches/${id}/results?offset=2`)).body.trimEnd().split('\n');
    expect(resumed.map((line) => JSON.parse(line).address)).toEqual([addressNo(3)]);
  });

  it('follows a running batch: a results request made before scoring starts receives every row', async () => {
    const addresses = Array.from({ length: 9 }, (_, i) => addressNo(i + 1));
    const { id } = (await post(`/v2/scorers/${scorerId}/batches`, { addresses })).json();
    const streamed = get(`/v2/batches/${id}/results`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.ctx.batches.worker.start();
    const lines = (await streamed).body.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.address)).toEqual(addresses);
  });

  it.each([
    ['a bad JSON address, by index', () => ({ addresses: [addressNo(1), addressNo(2), '0x12'] }), 'addresses[2]'],
    ['a bad CSV line, by line number', () => `address\n${addressNo(1)}\nnot-an-address\n`, 'Line 3'],
  ])('refuses %s with 400 invalid_address and queues nothing', async (_name, body, named) => {
    const res = await post(`/v2/scorers/${scorerId}/batches`, body());
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_address' });
    expect(res.json().detail).toContain(named);
    const count = await t.ctx.database.db.selectFrom('batch_items').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
    expect(await t.ctx.batches.repo.usage(accountId, new Date().toISOString().slice(0, 10))).toBe(0);
  });

  it('enforces the daily quota per account with 429 before anything is queued, Retry-After to the next UTC day', async () => {
    const first = await post(`/v2/scorers/${scorerId}/batches`, { addresses: Array.from({ length: 15 }, (_, i) => addressNo(i + 1)) });
    expect(first.statusCode).toBe(202);
    const over = await post(`/v2/scorers/${scorerId}/batches`, { addresses: Array.from({ length: 6 }, (_, i) => addressNo(i + 1)) });
    expect(over.statusCode).toBe(429);
    expect(over.json().code).toBe('batch_quota_exceeded');
    const retryAfter = Number(over.headers['retry-after']);
    const midnight = Math.ceil((Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000);
    expect(Math.abs(retryAfter - midnight)).toBeLessThanOrEqual(2);
    const batches = await t.ctx.database.db.selectFrom('batches').select('id').execute();
    expect(batches).toHaveLength(1);
    // Exactly the rest still fits; then the key has nothing left and is refused before its body is read.
    expect((await post(`/v2/scorers/${scorerId}/batches`, { addresses: Array.from({ length: 5 }, (_, i) => addressNo(i + 1)) })).statusCode).toBe(202);
    const spent = await post(`/v2/scorers/${scorerId}/batches`, '{not even json', { 'content-type': 'application/json' });
    expect(spent.statusCode).toBe(429);
  });

  it('hides batches of other accounts (404) and refuses scorers of other accounts (404)', async () => {
    const other = await seedAccount(t.ctx);
    const created = (await post(`/v2/scorers/${scorerId}/batches`, { addresses: [addressNo(1)] })).json();
    for (const url of [`/v2/batches/${created.id}`, `/v2/batches/${created.id}/results`]) {
      const res = await get(url, {}, other.key);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('batch_not_found');
    }
    const cancel = await t.app.inject({ method: 'DELETE', url: `/v2/batches/${created.id}`, headers: { 'x-api-key': other.key } });
    expect(cancel.statusCode).toBe(404);
    expect((await get(`/v2/batches/${created.id}`)).json().status).toBe('PENDING');
    const foreign = await post(`/v2/scorers/${scorerId}/batches`, { addresses: [addressNo(1)] }, {}, other.key);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('scorer_not_found');
  });

  it('needs read_scores on every batch route (403 naming it), before the body is read', async () => {
    const created = (await post(`/v2/scorers/${scorerId}/batches`, { addresses: [addressNo(1)] })).json();
    const limited = await seedAccount(t.ctx, { permissions: ['submit_passports'] });
    // The batch and the scorer belong to another account, but the permission is refused first.
    const requests = [
      () => post(`/v2/scorers/${limited.scorer.id}/batches`, '{"not":"parsed"', { 'content-type': 'application/json' }, limited.key),
      () => post(`/v2/stamps/${limited.scorer.id}/scores`, { addresses: [addressNo(1)] }, {}, limited.key),
      () => get(`/v2/batches/${created.id}`, {}, limited.key),
      () => get(`/v2/batches/${created.id}/results`, {}, limited.key),
    ];
    for (const request of requests) {
      const res = await request();
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'permission_denied' });
      expect(res.json().detail).toContain('read_scores');
    }
  });

  it('cancels a batch: nothing more is scored, the results leave unscored addresses out', async () => {
    const created = (await post(`/v2/scorers/${scorerId}/batches`, { addresses: Array.from({ length: 9 }, (_, i) => addressNo(i + 1)) })).json();
    const cancelled = await t.app.inject({ method: 'DELETE', url: `/v2/batches/${created.id}`, headers: { 'x-api-key': key } });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'CANCELLED', done: 0 });
    t.ctx.batches.worker.start();
    await t.ctx.batches.worker.idle();
    expect((await get(`/v2/batches/${created.id}`)).json()).toMatchObject({ status: 'CANCELLED', done: 0 });
    expect((await get(`/v2/batches/${created.id}/results`)).body).toBe('');
  });

  it('scores a synchronous batch in input order, duplicates answered with the same object', async () => {
    await giveStamps(t.ctx, addressNo(2), ['Google']);
    const res = await post(`/v2/stamps/${scorerId}/scores`, { addresses: [addressNo(2), addressNo(1), addressNo(2)] });
    expect(res.statusCode).toBe(200);
    const { items } = res.json();
    expect(items.map((item: { address: string }) => item.address)).toEqual([addressNo(2), addressNo(1), addressNo(2)]);
    expect(items[2]).toEqual(items[0]);
    const tooMany = await post(`/v2/stamps/${scorerId}/scores`, { addresses: Array.from({ length: 6 }, (_, i) => addressNo(i + 1)) });
    expect(tooMany.statusCode).toBe(400);
    const bad = await post(`/v2/stamps/${scorerId}/scores`, { addresses: [addressNo(1), 'nope'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_address' });
    expect(bad.json().detail).toContain('addresses[1]');
  });

  it('charges the synchronous batch one rate-limit unit per address, refusing (and charging nothing more) when they do not fit', async () => {
    // Tier 1: 125 units per window. 24 requests of 5 addresses spend 120, then 3 more: 123.
    const some = (n: number) => ({ addresses: Array.from({ length: n }, (_, j) => addressNo(j + 1)) });
    for (let i = 0; i < 24; i++) expect((await post(`/v2/stamps/${scorerId}/scores`, some(5))).statusCode).toBe(200);
    expect((await post(`/v2/stamps/${scorerId}/scores`, some(3))).statusCode).toBe(200);
    // 124 with this request's own unit; four more do not fit: refused, and those four are not spent.
    const refused = await post(`/v2/stamps/${scorerId}/scores`, some(5));
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await post(`/v2/stamps/${scorerId}/scores`, some(1))).statusCode).toBe(200);
    expect((await get(`/v2/batches/bat_AAAAAAAAAAAAAAAA`)).statusCode).toBe(429);
  });
});
