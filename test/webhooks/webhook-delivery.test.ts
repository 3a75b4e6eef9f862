/**
 * Webhooks end to end on both databases: real scoring appends score events (and their outbox rows), the webhook
 * worker delivers them to a real HTTP receiver on loopback, and the receiver checks every signature with the
 * independent `standardwebhooks` verifier. The worker's scheduling clock is driven by the test (no sleeps).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createAppContext, type AppContext } from '../../src/app/container.js';
import { permissionNames } from '../../src/scoring/accounts/permissions.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps } from '../helpers/stamps.js';
import { withTimeout } from '../helpers/processes.js';
import { type ReceivedWebhook, WebhookReceiver } from './receiver.js';

const hour = 3_600_000;
const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');

describe.each(databaseKinds)('webhook delivery on %s', (kind) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let hookUrl: string;
  let now: number;
  let key: string;
  let scorerId: number;
  let accountId: number;

  const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(body === undefined ? {} : { payload: body as object }) });
  const register = async (events: string[] = ['score.updated', 'score.expiring']) => {
    const res = await call('POST', `/v2/scorers/${scorerId}/webhooks`, { url: hookUrl, events });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: number; secret: string };
  };
  const score = (address: string) => t.ctx.v2.scores.scoreNow(scorerId, accountId, address);
  const verified = (secret: string, request: ReceivedWebhook) =>
    new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as Record<string, unknown>;

  beforeEach(async () => {
    now = Date.now();
    receiver = new WebhookReceiver();
    hookUrl = await receiver.listen();
    t = await createTestApp(
      kind,
      { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_EXPIRING_LEAD_HOURS: '72', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_MS: '50' },
      { webhooks: { clock: () => now, random: () => 0.5, expiringScanMs: 0 } },
    );
    // Every permission: the event feed needs historical_endpoint besides what webhooks need.
    const seeded = await seedAccount(t.ctx, { permissions: [...permissionNames] });
    key = seeded.key;
    scorerId = seeded.scorer.id;
    accountId = seeded.account.id;
  });
  afterEach(async () => {
    await t.close();
    await receiver.close();
  });

  it('delivers a score change signed so that the standardwebhooks verifier accepts it, with the v2 score as body', async () => {
    const { secret } = await register();
    const address = addressNo(1);
    await giveStamps(t.ctx, address, ['Google', 'Ens']);
    const scored = await score(address);
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received as [ReceivedWebhook];
    const payload = verified(secret, request);
    const event = await t.ctx.database.db.selectFrom('score_events').selectAll().executeTakeFirstOrThrow();
    expect(request.headers['webhook-id']).toBe(String(event.id));
    expect(request.headers['content-type']).toBe('application/json');
    expect(payload).toEqual({ ...scored.score, scorer_id: scorerId, event_id: String(event.id), type: 'score.updated' });
    expect(Object.keys(payload.stamps as object).sort()).toEqual(['Ens', 'Google']);
    // A wrong secret does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(request.body, request.headers as Record<string, string>)).toThrow();
    expect(await t.ctx.database.db.selectFrom('webhook_outbox').selectAll().execute()).toEqual([]);
  });

  it('retries a receiver that fails twice: the same webhook-id three times, three attempts in the delivery log', async () => {
    const { id, secret } = await register();
    receiver.answer = (_request, index) => (index < 2 ? 500 : 200);
    await score(addressNo(2));
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(1);
    // Not due yet: the first retry waits about 5 s (jitter 0.5 → exactly 5 s).
    now += 4_000;
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(1);
    now += 1_000;
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(2);
    now += 5 * 60_000;
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(3);
    now += 24 * hour;
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(3);

    const ids = receiver.received.map((request) => request.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    for (const request of receiver.received) expect(verified(secret, request).event_id).toBe(ids[0]);
    const log = (await call('GET', `/v2/webhooks/${id}/deliveries`)).json();
    expect(log.items.map((item: { attempt: number; status_code: number }) => [item.attempt, item.status_code])).toEqual([
      [3, 200],
      [2, 500],
      [1, 500],
    ]);
    expect(log.items.every((item: { event_id: string; delivery_state: string }) => item.event_id === ids[0] && item.delivery_state === 'delivered')).toBe(true);
    expect(log.items[2].error).toBe('HTTP 500');
    // The endpoint's failing period ended with the success.
    expect((await call('GET', `/v2/scorers/${scorerId}/webhooks`)).json().items[0]).toMatchObject({ enabled: true, failing_since: null });
  });

  it('sends nothing for an unchanged re-score, and keeps per-endpoint order by event id', async () => {
    await register();
    await giveStamps(t.ctx, addressNo(3), ['Google']);
    await score(addressNo(3));
    expect((await score(addressNo(3))).written).toBe(false);
    await score(addressNo(4));
    await t.ctx.webhooks.worker.runOnce();
    const ids = receiver.received.map((request) => Number(request.headers['webhook-id']));
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBeLessThan(ids[1] as number);
    expect(receiver.received.map((request) => JSON.parse(request.body).address)).toEqual([addressNo(3), addressNo(4)]);
  });

  it('sends only the event types an endpoint subscribed to', async () => {
    await register(['score.expiring']);
    await score(addressNo(5));
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(0);
    expect(await t.ctx.database.db.selectFrom('webhook_deliveries').selectAll().execute()).toEqual([]);
  });

  it('fires score.expiring once for a stamp expiring inside the lead time, and later for one that enters it', async () => {
    const { secret } = await register();
    await giveStamps(t.ctx, addressNo(6), [{ provider: 'Google', expiresInMs: 48 * hour }]);
    await giveStamps(t.ctx, addressNo(7), [{ provider: 'Google', expiresInMs: 100 * hour }]);
    await score(addressNo(6));
    await score(addressNo(7));
    await t.ctx.webhooks.worker.runOnce();
    const types = () => receiver.received.map((request) => [JSON.parse(request.body).type, JSON.parse(request.body).address]);
    expect(types()).toEqual([
      ['score.updated', addressNo(6)],
      ['score.updated', addressNo(7)],
      ['score.expiring', addressNo(6)],
    ]);
    const expiring = verified(secret, receiver.received[2] as ReceivedWebhook);
    const stored = await t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', addressNo(6)).executeTakeFirstOrThrow();
    expect(Date.parse(expiring.expiration_timestamp as string)).toBe(Number(stored.expiration_date));
    expect(expiring.last_score_timestamp).toBe(JSON.parse((receiver.received[0] as ReceivedWebhook).body).last_score_timestamp);

    // Further scans in the same window add nothing.
    now += hour;
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(3);
    // 30 hours later the second address's stamp is inside the 72 h lead time: one event for it.
    now += 30 * hour;
    await t.ctx.webhooks.worker.runOnce();
    await t.ctx.webhooks.worker.runOnce();
    expect(types().slice(3)).toEqual([['score.expiring', addressNo(7)]]);
    const events = await t.ctx.database.db.selectFrom('score_events').select(['type', 'address']).where('type', '=', 'score.expiring').execute();
    expect(events).toHaveLength(2);
  });

  it('serves the same events, in order and with the same payloads, in the event feed', async () => {
    await register();
    await giveStamps(t.ctx, addressNo(8), [{ provider: 'Google', expiresInMs: 24 * hour }]);
    await score(addressNo(8));
    await score(addressNo(9));
    await score(addressNo(10));
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(4);

    const feed = await call('GET', `/v2/scorers/${scorerId}/events?limit=2`);
    expect(feed.statusCode).toBe(200);
    const first = feed.json();
    expect(first.items).toHaveLength(2);
    const second = (await call('GET', first.next)).json();
    const third = (await call('GET', second.next)).json();
    expect(third.items).toEqual([]);
    expect(third.next).toBe(second.next);
    const items = [...first.items, ...second.items];
    expect(items.map((item: { event_id: string }) => item.event_id)).toEqual(receiver.received.map((request) => request.headers['webhook-id']));
    expect(items.map((item: { data: unknown }) => item.data)).toEqual(receiver.received.map((request) => JSON.parse(request.body)));
    expect(items.map((item: { type: string }) => item.type)).toEqual(['score.updated', 'score.updated', 'score.updated', 'score.expiring']);

    const other = await seedAccount(t.ctx, { permissions: [...permissionNames] });
    const foreign = await t.app.inject({ url: `/v2/scorers/${scorerId}/events`, headers: { 'x-api-key': other.key } });
    expect(foreign.statusCode).toBe(404);
    const bad = await call('GET', `/v2/scorers/${scorerId}/events?after=-1`);
    expect(bad.statusCode).toBe(400);
  });

  it('disables an endpoint failing for 3 days, says why in the listing, and a manual retry enables it again', async () => {
    const { id } = await register(['score.updated']);
    receiver.answer = () => 503;
    await score(addressNo(11));
    await t.ctx.webhooks.worker.runOnce();
    now += 5_000;
    await t.ctx.webhooks.worker.runOnce();
    expect((await call('GET', `/v2/scorers/${scorerId}/webhooks`)).json().items[0]).toMatchObject({ enabled: true, failing_since: expect.any(String) });
    // The next attempts come 5 min, 30 min, 2 h, 5 h, 10 h, 10 h later; at 3 days the endpoint is disabled.
    for (const wait of [5 * 60_000, 30 * 60_000, 2 * hour, 5 * hour, 10 * hour, 10 * hour]) {
      now += wait;
      await t.ctx.webhooks.worker.runOnce();
    }
    expect(receiver.received).toHaveLength(8);
    const log = (await call('GET', `/v2/webhooks/${id}/deliveries`)).json();
    expect(log.items[0]).toMatchObject({ attempt: 8, delivery_state: 'dead', status_code: 503 });
    now += 2 * 24 * hour;
    await score(addressNo(12));
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(9);
    const listed = (await call('GET', `/v2/scorers/${scorerId}/webhooks`)).json().items[0];
    expect(listed.enabled).toBe(false);
    expect(listed.disabled_reason).toMatch(/every delivery failed since .* \(last error: HTTP 503\)/);
    // Disabled: new events are not queued for it.
    await score(addressNo(13));
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(9);

    receiver.answer = () => 204;
    const deadDelivery = log.items[0].delivery_id;
    const retried = await call('POST', `/v2/webhooks/${id}/deliveries/${deadDelivery}/retry`);
    expect(retried.statusCode).toBe(202);
    await t.ctx.webhooks.worker.runOnce();
    expect(receiver.received.length).toBeGreaterThanOrEqual(10);
    expect(receiver.received.at(-1)?.headers['webhook-id']).toBeDefined();
    expect((await call('GET', `/v2/scorers/${scorerId}/webhooks`)).json().items[0]).toMatchObject({ enabled: true, disabled_reason: null });
    const after = (await call('GET', `/v2/webhooks/${id}/deliveries?limit=1`)).json();
    expect(after.items[0]).toMatchObject({ delivery_id: deadDelivery, attempt: 1, status_code: 204, delivery_state: 'delivered' });
  });

  it('delivers in the background once started, picking up events by polling', async () => {
    await register(['score.updated']);
    t.ctx.webhooks.worker.start();
    // Appended without telling the worker (as an API process would): the poll finds them.
    for (let n = 16; n < 19; n++) await score(addressNo(n));
    await withTimeout(receiver.waitFor(3), 20_000, 'three background deliveries');
    await t.ctx.webhooks.worker.stop();
    expect(receiver.received.map((request) => JSON.parse(request.body).address)).toEqual([addressNo(16), addressNo(17), addressNo(18)]);
  });

  it('keeps the delivery log 30 days after a delivery settled', async () => {
    const { id } = await register(['score.updated']);
    await score(addressNo(15));
    await t.ctx.webhooks.worker.runOnce();
    const log = async () => (await call('GET', `/v2/webhooks/${id}/deliveries`)).json().items;
    expect(await log()).toHaveLength(1);
    now += 29 * 24 * hour;
    await t.ctx.webhooks.worker.runOnce();
    expect(await log()).toHaveLength(1);
    now += 2 * 24 * hour;
    await t.ctx.webhooks.worker.runOnce();
    expect(await log()).toEqual([]);
    expect(await t.ctx.database.db.selectFrom('webhook_attempts').selectAll().execute()).toEqual([]);
    expect(receiver.received).toHaveLength(1);
  });

  it('signs with both secrets during a rotation grace period', async () => {
    const { id, secret: oldSecret } = await register();
    const rotated = (await call('POST', `/v2/webhooks/${id}/rotate-secret`)).json();
    await score(addressNo(14));
    await t.ctx.webhooks.worker.runOnce();
    const [request] = receiver.received as [ReceivedWebhook];
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(rotated.secret, request).type).toBe('score.updated');
    expect(verified(oldSecret, request).type).toBe('score.updated');
  });

  it('lets two workers share the deliveries without ever sending one event twice', async () => {
    await register(['score.updated']);
    await register(['score.updated']);
    const second: AppContext = await createAppContext(t.ctx.config, t.test.open(), { webhooks: { clock: () => now, random: () => 0.5 } });
    try {
      for (let n = 20; n < 45; n++) await score(addressNo(n));
      await Promise.all([t.ctx.webhooks.worker.runOnce(), second.webhooks.worker.runOnce(), t.ctx.webhooks.worker.runOnce()]);
      await t.ctx.webhooks.worker.runOnce();
      expect(receiver.received).toHaveLength(50);
      const pairs = receiver.received.map((request) => `${request.headers['webhook-id']}`);
      // Each event once per endpoint: 25 events × 2 endpoints, every id exactly twice.
      const counts = new Map<string, number>();
      for (const id of pairs) counts.set(id, (counts.get(id) ?? 0) + 1);
      expect([...counts.values()].every((count) => count === 2)).toBe(true);
      const attempts = await t.ctx.database.db.selectFrom('webhook_attempts').selectAll().execute();
      expect(attempts).toHaveLength(50);
    } finally {
      await second.close();
    }
  });
});
