import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';

const address = '0x' + 'cd'.repeat(20);

describe.each(databaseKinds)('API key permissions over HTTP on %s', (kind) => {
  let t: TestApp;
  let accountId: number;
  let scorerId: number;

  beforeEach(async () => {
    // A long key cache: a permission change must not wait for it to expire.
    t = await createTestApp(kind, { API_KEY_CACHE_TTL_MS: '600000' });
    const seeded = await seedAccount(t.ctx);
    accountId = seeded.account.id;
    scorerId = seeded.scorer.id;
  });
  afterEach(async () => t.close());

  const readScore = (key: string) => t.app.inject({ url: `/registry/score/${scorerId}/${address}`, headers: { 'x-api-key': key } });
  const submit = (key: string) =>
    t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': key }, payload: { address, scorer_id: String(scorerId) } });
  const scoreRows = () => t.ctx.database.db.selectFrom('scores').select('address').execute();

  it('refuses a key without read_scores with 403 permission_denied naming read_scores', async () => {
    const { key } = await t.ctx.apiKeys.create(accountId, { permissions: ['submit_passports', 'historical_endpoint'] });
    const res = await readScore(key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 'permission_denied', detail: expect.stringContaining('read_scores') });
  });

  it('refuses a key without submit_passports on submit with 403 naming it, and scores nothing', async () => {
    const { key } = await t.ctx.apiKeys.create(accountId, { permissions: ['read_scores', 'create_scorers'] });
    const res = await submit(key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 'permission_denied', detail: expect.stringContaining('submit_passports') });
    expect(await scoreRows()).toEqual([]);
    // The same key still reads (nothing scored yet: the address is unknown to the scorer).
    expect((await readScore(key)).statusCode).not.toBe(403);
  });

  it('applies an edit from the next request, in both directions, despite the key cache', async () => {
    const { key, apiKey } = await t.ctx.apiKeys.create(accountId, { permissions: ['read_scores'] });
    expect((await submit(key)).statusCode).toBe(403);
    await t.ctx.apiKeys.setPermissions(apiKey.prefix, ['read_scores', 'submit_passports']);
    const allowed = await submit(key);
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json().address).toBe(address);
    await t.ctx.apiKeys.setPermissions(apiKey.prefix, ['submit_passports']);
    const refused = await readScore(key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().detail).toContain('read_scores');
  });

  it('lets a key with no permissions authenticate but do nothing guarded', async () => {
    const { key } = await t.ctx.apiKeys.create(accountId, { permissions: [] });
    expect((await readScore(key)).json().code).toBe('permission_denied');
    expect((await submit(key)).json().code).toBe('permission_denied');
    // A wrong key is still 401, not 403: permissions are checked only for a valid key.
    expect((await readScore(`${key.slice(0, 9)}${'A'.repeat(43)}`)).statusCode).toBe(401);
  });
});
