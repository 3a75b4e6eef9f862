import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { WebhookReceiver } from './receiver.js';

function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return undefined;
}

describe.each(databaseKinds)('webhook metrics on %s', (kind) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let now: number;
  beforeEach(async () => {
    now = Date.now();
    receiver = new WebhookReceiver();
    t = await createTestApp(kind, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, { webhooks: { clock: () => now, random: () => 0.5 } });
  });
  afterEach(async () => {
    await t.close();
    await receiver.close();
  });

  it('counts deliveries by outcome and reports the age of the oldest undelivered event', async () => {
    const url = await receiver.listen();
    const { key, scorer, account } = await seedAccount(t.ctx);
    const registered = await t.app.inject({ method: 'POST', url: `/v2/scorers/${scorer.id}/webhooks`, headers: { 'x-api-key': key }, payload: { url, events: ['score.updated'] } });
    expect(registered.statusCode).toBe(201);
    const metrics = async () => (await t.app.inject('/metrics')).body;
    expect(sample(await metrics(), 'stampgate_webhook_outbox_lag_seconds')).toBe(0);

    receiver.answer = (_request, index) => (index === 0 ? 500 : 200);
    await t.ctx.v2.scores.scoreNow(scorer.id, account.id, '0x' + '5'.repeat(40));
    const event = await t.ctx.database.db.selectFrom('score_events').select('created_at').executeTakeFirstOrThrow();
    const waiting = sample(await metrics(), 'stampgate_webhook_outbox_lag_seconds');
    expect(waiting).toBeGreaterThan(0);
    expect(waiting).toBeLessThanOrEqual((Date.now() - Number(event.created_at)) / 1000);

    await t.ctx.webhooks.worker.runOnce();
    let text = await metrics();
    expect(sample(text, 'stampgate_webhook_deliveries_total', { outcome: 'failed' })).toBe(1);
    expect(sample(text, 'stampgate_webhook_outbox_lag_seconds')).toBeGreaterThan(0);

    now += 10_000;
    await t.ctx.webhooks.worker.runOnce();
    text = await metrics();
    expect(sample(text, 'stampgate_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    expect(sample(text, 'stampgate_webhook_outbox_lag_seconds')).toBe(0);
  });
});
