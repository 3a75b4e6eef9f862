/**
 * The per-account limits of webhooks over HTTP on both databases: endpoints per account (over all its scorers)
 * and manual retries, which are idempotent while a delivery waits and limited per delivery.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { WebhookReceiver } from './receiver.js';

describe.each(databaseKinds)('webhook limits on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let accountId: number;
  let scorerId: number;
  let receiver: WebhookReceiver;
  let now: number;

  const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(body === undefined ? {} : { payload: body as object }) });
  const register = (scorer: number, url = 'http://127.0.0.1:9/hook') => call('POST', `/v2/scorers/${scorer}/webhooks`, { url, events: ['score.updated'] });
  const deliveries = () => t.ctx.database.db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();

  beforeEach(async () => {
    now = Date.now();
    receiver = new WebhookReceiver();
    t = await createTestApp(
      kind,
      {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_MAX_PER_SCORER: '5',
        WEBHOOK_ENDPOINTS_PER_ACCOUNT: '2',
        WEBHOOK_MANUAL_RETRIES_PER_DELIVERY: '2',
      },
      { webhooks: { clock: () => now, random: () => 0.5, expiringScanMs: 3_600_000 } },
    );
    const seeded = await seedAccount(t.ctx, { permissions: ['create_scorers', 'read_scores'] });
    key = seeded.key;
    accountId = seeded.account.id;
    scorerId = seeded.scorer.id;
  });
  afterEach(async () => {
    await t.close();
    await receiver.close();
  });

  it('refuses an endpoint past WEBHOOK_ENDPOINTS_PER_ACCOUNT over all the scorers of the account with 409, and stores nothing', async () => {
    const otherScorer = await t.ctx.accounts.createScorer(accountId, { name: 'Second', type: 'weighted' });
    expect((await register(scorerId)).statusCode).toBe(201);
    expect((await register(otherScorer.id)).statusCode).toBe(201);
    // Each scorer is below WEBHOOK_MAX_PER_SCORER; the account is at its limit.
    const third = await register(otherScorer.id);
    expect(third.statusCode).toBe(409);
    expect(third.json()).toEqual({
      code: 'webhook_account_limit_reached',
      detail: 'This account has 2 webhooks already over all its scorers; delete one first.',
    });
    expect(await t.ctx.database.db.selectFrom('webhook_endpoints').select('id').execute()).toHaveLength(2);
    // Another account has its own limit.
    const other = await seedAccount(t.ctx, { permissions: ['create_scorers', 'read_scores'] });
    const res = await t.app.inject({
      method: 'POST',
      url: `/v2/scorers/${other.scorer.id}/webhooks`,
      headers: { 'x-api-key': other.key },
      payload: { url: 'http://127.0.0.1:9/hook', events: ['score.updated'] },
    });
    expect(res.statusCode).toBe(201);
  });

  it('does not queue a delivery again while it waits, and refuses retries past WEBHOOK_MANUAL_RETRIES_PER_DELIVERY', async () => {
    const { id } = (await register(scorerId, await receiver.listen())).json();
    await t.ctx.v2.scores.scoreNow(scorerId, accountId, `0x${'1'.repeat(40)}`);
    await t.ctx.webhooks.queue.dispatch(now, 100);
    const [queued] = await deliveries();
    if (!queued) throw new Error('no delivery');
    const retryUrl = `/v2/webhooks/${id}/deliveries/${queued.id}/retry`;

    // Queued and not sent yet: answered as queued, nothing changes and no retry is counted, however often.
    for (let n = 0; n < 5; n++) {
      const res = await call('POST', retryUrl);
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ delivery_id: queued.id, state: 'queued' });
    }
    expect(await deliveries()).toEqual([queued]);

    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(1);
    for (let n = 1; n <= 2; n++) {
      expect((await call('POST', retryUrl)).statusCode).toBe(202);
      await t.ctx.webhooks.worker.runOnce();
      expect(receiver.received).toHaveLength(1 + n);
    }
    const before = await deliveries();
    const refused = await call('POST', retryUrl);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      code: 'delivery_retry_limit_reached',
      detail: `Delivery ${queued.id} was retried 2 times already; it is not retried again.`,
    });
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(3);
    expect(await deliveries()).toEqual(before);
    expect(before[0]).toMatchObject({ state: 'delivered', manual_retries: 2 });
  });
});
