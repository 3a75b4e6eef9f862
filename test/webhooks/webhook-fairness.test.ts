/**
 * Fair delivery across accounts on both databases: one account's endpoints hang (real loopback servers that
 * accept every request and never answer) while another account's healthy endpoint is still served; claims go by
 * turns (accounts, then endpoints within an account); at most WEBHOOK_INFLIGHT_PER_ACCOUNT attempts of one account
 * are in flight, also when several workers claim at the same time. Order and counts are asserted, never timings
 * (the delay figures are in bench/webhook-fairness.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import type { ClaimedDelivery } from '../../src/webhooks/delivery-queue.repository.js';
import { deliveryQueueRepository } from '../../src/webhooks/delivery-queue.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { withTimeout } from '../helpers/processes.js';
import { WebhookReceiver } from './receiver.js';

const HANGING = 56;
const CAP = 4;
const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const delivered = { delivered: true, statusCode: 204, durationMs: 1, error: null };

describe.each(databaseKinds)('fair webhook delivery on %s', (kind) => {
  let t: TestApp;
  let hanging: WebhookReceiver;
  let healthy: WebhookReceiver;
  let now: number;

  const account = async (name: string) => {
    const created = await t.ctx.accounts.createAccount(name);
    const scorer = await t.ctx.accounts.createScorer(created.id, { name, type: 'weighted' });
    return { accountId: created.id, scorerId: scorer.id };
  };
  const register = (owner: { accountId: number; scorerId: number }, url: string) =>
    t.ctx.webhooks.endpoints.register(owner.accountId, owner.scorerId, { url, events: ['score.updated'] });
  const score = (owner: { accountId: number; scorerId: number }, n: number) => t.ctx.v2.scores.scoreNow(owner.scorerId, owner.accountId, addressNo(n));
  const accountOf = async (claim: ClaimedDelivery) =>
    (await t.ctx.database.db.selectFrom('webhook_endpoints').select('account_id').where('id', '=', claim.endpoint.id).executeTakeFirstOrThrow()).account_id;

  beforeEach(async () => {
    now = Date.now();
    hanging = new WebhookReceiver();
    hanging.answer = () => 'hold';
    healthy = new WebhookReceiver();
    t = await createTestApp(
      kind,
      {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_MAX_PER_SCORER: String(HANGING),
        WEBHOOK_ENDPOINTS_PER_ACCOUNT: String(HANGING),
        WEBHOOK_INFLIGHT_PER_ACCOUNT: String(CAP),
        // Longer than the test: the hanging attempts are still hanging when it ends.
        WEBHOOK_TIMEOUT_MS: '60000',
        WEBHOOK_POLL_MS: '50',
      },
      { webhooks: { clock: () => now, random: () => 0.5, expiringScanMs: 3_600_000 } },
    );
  });
  afterEach(async () => {
    // Resetting the held connections ends the hanging attempts, so the worker stops at once.
    await hanging.close();
    await t.close();
    await healthy.close();
  });

  it('delivers the healthy account while 56 endpoints of another hang, with at most WEBHOOK_INFLIGHT_PER_ACCOUNT of them open', async () => {
    const slow = await account('Hanging');
    const hangingUrl = await hanging.listen();
    for (let n = 0; n < HANGING; n++) await register(slow, `${hangingUrl}/${n}`);
    const fine = await account('Healthy');
    const { secret } = await register(fine, await healthy.listen());
    // The 56 deliveries of the hanging account are queued before the healthy one.
    await score(slow, 1);
    await score(fine, 2);
    t.ctx.webhooks.worker.start();
    await withTimeout(healthy.waitFor(1), 20_000, 'the healthy delivery');
    // More events of the healthy account, each delivered in turn: every finished attempt makes the worker claim again.
    for (let n = 3; n <= 5; n++) {
      await score(fine, n);
      t.ctx.webhooks.worker.notify();
      await withTimeout(healthy.waitFor(n - 1), 20_000, `healthy delivery ${n - 1}`);
    }
    // Nothing at the hanging server ever answered: what it received is what is open there, and it is the cap.
    expect(hanging.received).toHaveLength(CAP);
    expect(hanging.held.every((res) => !res.writableEnded)).toBe(true);
    expect(new Set(hanging.received.map((request) => request.headers['webhook-id'])).size).toBe(1);
    // The healthy deliveries are signed as before.
    for (const request of healthy.received) {
      const payload = new Webhook(secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }) as { scorer_id: number };
      expect(payload.scorer_id).toBe(fine.scorerId);
    }
    const running = await t.ctx.database.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select('d.id')
      .where('d.state', '=', 'running')
      .where('e.account_id', '=', slow.accountId)
      .execute();
    expect(running).toHaveLength(CAP);
  });

  it('claims the healthy account second although 56 deliveries of another were queued first, then the cap stops the other', async () => {
    const slow = await account('Hanging');
    for (let n = 0; n < HANGING; n++) await register(slow, `http://127.0.0.1:9/hang/${n}`);
    const fine = await account('Healthy');
    await register(fine, 'http://127.0.0.1:9/healthy');
    await score(slow, 1);
    await score(fine, 2);
    const { queue } = t.ctx.webhooks;
    expect(await queue.dispatch(now, 100)).toBe(2);
    const claims: number[] = [];
    for (;;) {
      const claim = await queue.claim('test-owner', now, 60_000, CAP);
      if (!claim) break;
      claims.push(await accountOf(claim));
    }
    // Oldest first would have claimed the 56 deliveries of the hanging account before the healthy one.
    expect(claims).toEqual([slow.accountId, fine.accountId, slow.accountId, slow.accountId, slow.accountId]);
  });

  it('takes turns between the endpoints of one account: a new endpoint goes before the next event of one just served', async () => {
    const owner = await account('Two endpoints');
    const { queue } = t.ctx.webhooks;
    const first = await register(owner, 'http://127.0.0.1:9/first');
    for (let n = 1; n <= 3; n++) await score(owner, n);
    await queue.dispatch(now, 100);
    const second = await register(owner, 'http://127.0.0.1:9/second');
    await score(owner, 4);
    await queue.dispatch(now, 100);
    const order: number[] = [];
    for (let n = 0; n < 4; n++) {
      const claim = await queue.claim('test-owner', now, 60_000, 1);
      if (!claim) throw new Error('nothing claimed');
      order.push(claim.endpoint.id);
      expect(await queue.settle(claim, 'test-owner', now, delivered, null, null)).toBe('delivered');
    }
    // Oldest first would have sent the first endpoint's three older events before the second endpoint's one.
    expect(order).toEqual([first.id, second.id, first.id, first.id]);
  });

  it('never lets concurrent workers pass the cap of one account nor take one delivery twice', async () => {
    const owner = await account('Busy');
    for (let n = 0; n < 10; n++) await register(owner, `http://127.0.0.1:9/busy/${n}`);
    await score(owner, 1);
    await t.ctx.webhooks.queue.dispatch(now, 100);
    // A second connection on PostgreSQL, as another worker process has. SQLite has one writer at a time, and two
    // connections of one process would wait on each other's write lock with the thread blocked: one connection.
    const other = kind === 'postgres' ? t.test.open() : null;
    try {
      const queues = [t.ctx.webhooks.queue, other ? deliveryQueueRepository(other) : t.ctx.webhooks.queue];
      const burst = await Promise.all(Array.from({ length: 8 }, (_, n) => (queues[n % 2] as (typeof queues)[0]).claim(`worker-${n % 2}`, now, 60_000, CAP)));
      const claimed = burst.filter((claim): claim is ClaimedDelivery => claim !== undefined);
      expect(claimed.length).toBeGreaterThanOrEqual(1);
      expect(claimed.length).toBeLessThanOrEqual(CAP);
      // A worker that lost a race for the account took nothing: claiming again fills up to the cap, not past it.
      for (;;) {
        const claim = await (queues[0] as (typeof queues)[0]).claim('worker-0', now, 60_000, CAP);
        if (!claim) break;
        claimed.push(claim);
      }
      expect(claimed).toHaveLength(CAP);
      expect(new Set(claimed.map((claim) => claim.delivery.id)).size).toBe(CAP);
      const running = await t.ctx.database.db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'running').execute();
      expect(running).toHaveLength(CAP);
    } finally {
      await other?.close();
    }
  });
});
