/**
 * A worker killed mid-delivery loses nothing: a real `stampgate worker` process sends a webhook, the receiver
 * holds the request, the process is SIGKILLed, and a second worker process delivers the same event (same
 * `webhook-id`, verified with the standardwebhooks library) once the dead worker's lease has run out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createAppContext, type AppContext } from '../../src/app/container.js';
import { describeSettings, loadConfig } from '../../src/config/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { seedAccount } from '../helpers/app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { buildCli, cliEnvironment, RunningCli, waitFor } from '../helpers/processes.js';
import { WebhookReceiver } from './receiver.js';

const settingNames = describeSettings().map((s) => s.name);
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-webhook-crash-'));
const running: RunningCli[] = [];
let cliPath = '';

beforeAll(async () => {
  cliPath = await buildCli(mkdtempSync(join(workDir, 'build-')));
}, 90_000);

afterAll(async () => {
  for (const proc of running) if (!proc.exit) proc.child.kill('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
});

describe.each(databaseKinds)('a webhook worker killed mid-delivery on %s', (kind) => {
  let test: TestDatabase;
  let ctx: AppContext;
  const receiver = new WebhookReceiver();
  afterAll(async () => {
    await ctx?.close();
    await receiver.close();
    await test?.drop();
  });

  it('leaves the delivery to the next worker, which sends the same event after the lease runs out', async () => {
    const hookUrl = await receiver.listen();
    test = await createTestDatabase(kind);
    const dataDir = mkdtempSync(join(workDir, `${kind}-data-`));
    const settings = {
      STAMPGATE_ENV: 'development',
      DATA_DIR: dataDir,
      DATABASE_URL: test.url,
      WEBHOOK_SECRET_KEY: 'test-master-key-'.padEnd(48, 'x'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_POLL_MS: '100',
    };
    const database = test.open();
    await migrateToLatest(database);
    ctx = await createAppContext(loadConfig(settings), database);
    const { account, scorer } = await seedAccount(ctx);
    const { secret } = await ctx.webhooks.endpoints.register(account.id, scorer.id, { url: hookUrl, events: ['score.updated'] });
    await ctx.v2.scores.scoreNow(scorer.id, account.id, '0x' + '1'.padStart(40, '0'));
    const event = await ctx.database.db.selectFrom('score_events').selectAll().executeTakeFirstOrThrow();

    receiver.answer = (_request, index) => (index === 0 ? 'hold' : 200);
    const start = (label: string) => {
      const proc = new RunningCli(label, cliPath, ['worker'], cliEnvironment(settingNames, settings), dataDir);
      running.push(proc);
      return proc;
    };
    const first = start('worker 1');
    await waitFor('the first attempt to reach the receiver', 60_000, () => {
      if (first.exit) throw new Error(`worker 1 exited early\n${first.tail()}`);
      return receiver.received.length >= 1;
    });
    // The receiver holds the request: kill the worker while it waits for the answer.
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const leased = await ctx.database.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(leased).toMatchObject({ state: 'running', attempts: 1 });
    expect(await ctx.database.db.selectFrom('webhook_attempts').selectAll().execute()).toEqual([]);

    const second = start('worker 2');
    try {
      await waitFor('the delivery after the restart', 60_000, async () => {
        if (second.exit) throw new Error(`worker 2 exited early\n${second.tail()}`);
        const row = await ctx.database.db.selectFrom('webhook_deliveries').select('state').executeTakeFirstOrThrow();
        return row.state === 'delivered';
      }, 200);
    } finally {
      await second.stop('SIGTERM');
    }
    expect(receiver.received).toHaveLength(2);
    const [held, delivered] = receiver.received as [(typeof receiver.received)[0], (typeof receiver.received)[0]];
    expect(held.headers['webhook-id']).toBe(String(event.id));
    expect(delivered.headers['webhook-id']).toBe(String(event.id));
    const payload = new Webhook(secret).verify(delivered.body, {
      'webhook-id': String(delivered.headers['webhook-id']),
      'webhook-timestamp': String(delivered.headers['webhook-timestamp']),
      'webhook-signature': String(delivered.headers['webhook-signature']),
    }) as { event_id: string; scorer_id: number };
    expect(payload).toMatchObject({ event_id: String(event.id), scorer_id: scorer.id });
    // Not before the dead worker's lease (timeout + margin) ran out.
    expect(delivered.at - held.at).toBeGreaterThanOrEqual(3000);
    const attempts = await ctx.database.db.selectFrom('webhook_attempts').selectAll().orderBy('id').execute();
    expect(attempts.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, null, 'interrupted: the worker stopped during this attempt'],
      [2, 200, null],
    ]);
  }, 120_000);
});
