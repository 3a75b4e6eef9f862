/**
 * A score change and its event are one transaction: a real `stampgate worker` is killed with
 * SIGKILL in the middle of a backlog, and afterwards every settled score row agrees with its
 * latest event and no event exists without the row state it describes.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../../src/app/container.js';
import { describeSettings, loadConfig } from '../../../src/config/index.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { createTestDatabase, databaseKinds } from '../../helpers/databases.js';
import { buildCli, cliEnvironment, RunningCli, waitFor } from '../../helpers/processes.js';
import { giveStamps, testWallet } from '../../helpers/stamps.js';

const repoDir = fileURLToPath(new URL('../../..', import.meta.url));
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-crash-'));
const WITH_STAMPS = 40;
const WITHOUT_STAMPS = 2000;
let cliPath = '';

beforeAll(async () => {
  mkdirSync(join(workDir, 'build'));
  cliPath = await buildCli(join(workDir, 'build'));
}, 120_000);

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe.each(databaseKinds)('score events survive a killed worker on %s', (kind) => {
  it('every settled row matches its latest event, and every latest event matches its row', { timeout: 300_000 }, async () => {
    const test = await createTestDatabase(kind);
    const dataDir = mkdtempSync(join(workDir, `data-${kind}-`));
    const database = test.open();
    let worker: RunningCli | undefined;
    try {
      await migrateToLatest(database);
      const config = loadConfig({ STAMPGATE_ENV: 'development', API_KEY_CACHE_TTL_MS: '0', DATA_DIR: dataDir, DATABASE_URL: test.url });
      const ctx = await createAppContext(config, database, { http: false });
      const account = await ctx.accounts.createAccount('crash');
      const scorer = await ctx.accounts.createScorer(account.id, { name: 'crash', weights: { Google: '12.345675', Discord: '8', Ens: '3' } });
      const addresses = Array.from({ length: WITH_STAMPS }, (_, i) => testWallet(1700 + i).address);
      for (const [i, address] of addresses.entries()) {
        // Pairs share an Ens nullifier, so the order of completion decides who is deduplicated.
        await giveStamps(ctx, address, ['Google', ...(i % 2 ? ['Discord'] : []), { provider: 'Ens', nullifiers: [`v0:ens-${i >> 1}`] }]);
      }
      // Half of them were scored before, so their re-scoring is the "nothing changed" path.
      for (const address of addresses.slice(0, WITH_STAMPS / 2)) await ctx.v2.scores.scoreNow(scorer.id, account.id, address);
      for (const address of addresses) await ctx.jobs.enqueue(scorer.id, address, Date.now());
      for (let i = 0; i < WITHOUT_STAMPS; i++) await ctx.jobs.enqueue(scorer.id, `0x${randomBytes(20).toString('hex')}`, Date.now());
      await ctx.close();

      worker = new RunningCli(
        'worker',
        cliPath,
        ['worker'],
        cliEnvironment(describeSettings().map((s) => s.name), {
          STAMPGATE_ENV: 'development',
          LOG_LEVEL: 'debug',
          DATA_DIR: dataDir,
          DATABASE_URL: test.url,
          SCORING_CONCURRENCY: '4',
        }),
        repoDir,
      );
      const running = worker;
      await waitFor('the worker to settle 200 jobs', 120_000, () => {
        if (running.exit) throw new Error(`worker exited early\n${running.tail()}`);
        return running.lines.filter((line) => line.includes('"scoring job settled"')).length >= 200;
      }, 2);
      running.child.kill('SIGKILL');
      expect(await running.stop('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });

      const check = test.open();
      try {
        const db = check.db;
        const left = await db.selectFrom('scoring_jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        expect(Number(left.n), 'killed mid-run: jobs were left').toBeGreaterThan(0);
        const rows = await db.selectFrom('scores').selectAll().where('scorer_id', '=', scorer.id).execute();
        const events = await db.selectFrom('score_events').selectAll().where('scorer_id', '=', scorer.id).orderBy('id').execute();
        const latest = new Map<string, (typeof events)[number]>();
        for (const event of events) latest.set(event.address, event);
        const settled = rows.filter((row) => row.status !== 'PROCESSING');
        expect(settled.length, 'many jobs completed before the kill').toBeGreaterThanOrEqual(100);
        for (const row of settled) {
          const event = latest.get(row.address);
          expect(event, `event of ${row.address}`).toBeDefined();
          expect(Number(row.event_id)).toBe(Number(event!.id));
          expect([event!.status, event!.score, event!.raw_score, event!.stamps, event!.error]).toEqual([row.status, row.score, row.raw_score, row.stamps, row.error]);
        }
        const byAddress = new Map(rows.map((row) => [row.address, row]));
        for (const [address, event] of latest) {
          const row = byAddress.get(address);
          expect(row, `row of ${address}`).toBeDefined();
          // A PROCESSING row is a re-queued address: its event stays the last settled result.
          if (row!.status === 'PROCESSING') continue;
          expect(Number(row!.event_id)).toBe(Number(event.id));
        }
        // The re-scored addresses whose result did not change have exactly one event.
        const counts = new Map<string, number>();
        for (const event of events) counts.set(event.address, (counts.get(event.address) ?? 0) + 1);
        for (const address of addresses.slice(0, WITH_STAMPS / 2)) expect(counts.get(address), address).toBe(1);
      } finally {
        await check.close();
      }
    } finally {
      if (worker && !worker.exit) worker.child.kill('SIGKILL');
      await test.drop();
    }
  });
});
