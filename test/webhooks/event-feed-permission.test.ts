import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';

// The event feed replays every past score and stamp breakdown of every address of the scorer:
// score history, which only keys with historical_endpoint (off by default) may read.
describe.each(databaseKinds)('the event feed needs historical_endpoint, on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  it('refuses a read_scores key (403, standard body) and serves a key with historical_endpoint', async () => {
    const seeded = await seedAccount(t.ctx, { permissions: ['read_scores', 'submit_passports'] });
    const address = testWallet(471).address;
    await giveStamps(t.ctx, address, ['Google']);
    await t.ctx.v2.scores.scoreNow(seeded.scorer.id, seeded.account.id, address);
    const url = `/v2/scorers/${seeded.scorer.id}/events`;

    const refused = await t.app.inject({ url, headers: { 'x-api-key': seeded.key } });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toEqual({ detail: expect.stringContaining('historical_endpoint'), code: 'permission_denied' });
    expect(refused.body).not.toContain(address);

    const { key: historyKey } = await t.ctx.apiKeys.create(seeded.account.id, { permissions: ['historical_endpoint'] });
    const served = await t.app.inject({ url, headers: { 'x-api-key': historyKey } });
    expect(served.statusCode, served.body).toBe(200);
    expect(served.json().items.map((item: { data: { address: string } }) => item.data.address)).toEqual([address]);
  });
});
