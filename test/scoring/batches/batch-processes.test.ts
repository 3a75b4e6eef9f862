/**
 * Batches in real `stampgate` OS processes (src/ transpiled once by esbuild, see buildCli):
 *
 * - memory: a 100,000-address batch sent to `stampgate serve` on SQLite as one JSON body, scored
 *   there to the end and streamed back whole, while the process's resident memory is read from
 *   /proc/<pid>/status (VmHWM, the peak): it stays under 200 MB. An idle `serve` is about 145 MB;
 *   with V8's default heap sizing, any sustained allocation (a busy API server's too) grows the
 *   young generation to 3 × 16 MB and lets old-space garbage pile up before a full collection,
 *   which takes such a process to about 255 MB whatever it holds. So the child runs with the
 *   memory-constrained settings of docs/operations.md, NODE_OPTIONS="--max-semi-space-size=2
 *   --max-old-space-size=128" (peak about 160 MB; 198 MB with the semi-space setting alone). What
 *   the test shows is that nothing grows with the batch: no per-address retention, paged results;
 * - crash (both databases): a `stampgate worker` scoring a batch is killed with SIGKILL in the
 *   middle, another worker finishes it, and every address then has exactly one result, one score
 *   event and one score write (the item's result, the event and the score row agree in time).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext, type AppContext } from '../../../src/app/container.js';
import { describeSettings, loadConfig } from '../../../src/config/index.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { createTestDatabase, databaseKinds, type DatabaseKind } from '../../helpers/databases.js';
import { buildCli, cliEnvironment, freePort, RunningCli, waitFor } from '../../helpers/processes.js';
import { giveStamps } from '../../helpers/stamps.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const providers = ['Google', 'Ens', 'Github', 'Discord', 'Linkedin', 'Twitter', 'Facebook', 'Brightid', 'Poh', 'Gitcoin'];
const MB = 1024 * 1024;

let workDir: string;
let cliPath: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'stampgate-batch-proc-'));
  cliPath = await buildCli(join(workDir, 'build'));
}, 120_000);
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** Peak and current resident memory of a process, from /proc (kB → bytes). */
function memoryOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

async function seed(kind: DatabaseKind, dataDir: string, stamped: number[]) {
  const test = await createTestDatabase(kind);
  const database = test.open();
  await migrateToLatest(database);
  const config = loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: test.url });
  const ctx = await createAppContext(config, database);
  const account = await ctx.accounts.createAccount('Batch account');
  const scorer = await ctx.accounts.createScorer(account.id, { name: 'Batch scorer', type: 'weighted' });
  const { key, apiKey } = await ctx.apiKeys.create(account.id, { tier: 4 });
  for (const n of stamped) await giveStamps(ctx, addressNo(n), providers.slice(0, 1 + (n % providers.length)));
  return { test, ctx, account, scorer, key, apiKey };
}

function start(label: string, args: string[], settings: Record<string, string>): RunningCli {
  const env = cliEnvironment(describeSettings().map((s) => s.name), { STAMPGATE_ENV: 'development', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...settings });
  return new RunningCli(label, cliPath, args, env, workDir);
}

describe('a 100,000-address batch in a real serve process on SQLite', () => {
  it('is queued, scored to the end and streamed back with the process staying under 200 MB of resident memory', async () => {
    const dataDir = mkdtempSync(join(workDir, 'data-'));
    const total = 100_000;
    // Most addresses have no stamps; one in a thousand has 1 to 10.
    const stamped = Array.from({ length: 100 }, (_, i) => i * 1000 + 7);
    const { test, ctx, scorer, key } = await seed('sqlite', dataDir, stamped);
    await ctx.close();
    const port = await freePort();
    const serve = start('serve', ['serve'], {
      DATA_DIR: dataDir,
      DATABASE_URL: test.url,
      PORT: String(port),
      BATCH_CONCURRENCY: '1',
      BATCH_POLL_MS: '50',
      NODE_OPTIONS: '--max-semi-space-size=2 --max-old-space-size=128',
    });
    let peak = 0;
    let phase = 'start';
    const peaks: Record<string, number> = {};
    const sampler = setInterval(() => {
      try {
        const now = memoryOf(serve.child.pid!).now;
        peak = Math.max(peak, now);
        peaks[phase] = Math.max(peaks[phase] ?? 0, Math.round(now / MB));
      } catch {
        // The process has exited; the test fails on its own.
      }
    }, 100);
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor('serve to answer', 30_000, async () => (await fetch(`${base}/health/live`).catch(() => null))?.ok === true, 100);
      phase = 'queueing';
      const body = JSON.stringify({ addresses: Array.from({ length: total }, (_, i) => addressNo(i)) });
      const created = await fetch(`${base}/v2/scorers/${scorer.id}/batches`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body,
      });
      expect(created.status, await created.clone().text()).toBe(202);
      const { id } = (await created.json()) as { id: string };
      const startedAt = Date.now();
      const afterCreate = memoryOf(serve.child.pid!);
      phase = 'scoring';
      let status: { status: string; done: number; failed: number } = { status: 'PENDING', done: 0, failed: 0 };
      await waitFor('the batch to finish', 280_000, async () => {
        status = (await (await fetch(`${base}/v2/batches/${id}`, { headers: { 'x-api-key': key } })).json()) as typeof status;
        return status.status === 'DONE';
      }, 1000);
      const seconds = (Date.now() - startedAt) / 1000;
      expect(status).toMatchObject({ status: 'DONE', done: total, failed: 0 });

      phase = 'streaming';
      const results = await fetch(`${base}/v2/batches/${id}/results`, { headers: { 'x-api-key': key, accept: 'text/csv' } });
      expect(results.status).toBe(200);
      let lines = 0;
      let stampedSeen = 0;
      let partial = '';
      const decoder = new TextDecoder();
      for await (const chunk of results.body!) {
        const parts = (partial + decoder.decode(chunk as Uint8Array, { stream: true })).split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts) {
          if (lines > 0) {
            const [address, score] = line.split(',');
            expect(address).toBe(addressNo(lines - 1));
            if (score !== '0.00000') stampedSeen++;
          }
          lines++;
        }
      }
      expect(lines).toBe(total + 1);
      expect(stampedSeen).toBe(stamped.length);
      const memory = memoryOf(serve.child.pid!);
      peak = Math.max(peak, memory.peak);
      console.log(
        `100,000-address batch on SQLite: scored in ${seconds.toFixed(1)} s (${Math.round(total / seconds)} addresses/s); serve RSS ` +
          `${(afterCreate.now / MB).toFixed(1)} MB once queued (peak so far ${(afterCreate.peak / MB).toFixed(1)}), ${(memory.now / MB).toFixed(1)} MB after ` +
          `scoring and streaming, peak sampled ${(peak / MB).toFixed(1)} MB (by phase ${JSON.stringify(peaks)}), VmHWM ${(memory.peak / MB).toFixed(1)} MB`,
      );
      expect(memory.peak).toBeLessThan(200 * MB);
      expect(peak).toBeLessThan(200 * MB);
    } finally {
      clearInterval(sampler);
      await serve.stop('SIGTERM').catch(() => serve.stop('SIGKILL'));
      await test.drop();
    }
    // About a minute on a quiet machine (≈ 2,000 addresses/s); the bound leaves room for a busy one.
  }, 360_000);
});

describe.each(databaseKinds)('a batch worker killed mid-batch on %s', (kind) => {
  let seeded: Awaited<ReturnType<typeof seed>>;
  let ctx: AppContext;
  let dataDir: string;
  const total = 3000;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(workDir, 'data-'));
    seeded = await seed(kind, dataDir, Array.from({ length: 30 }, (_, i) => i * 100 + 3));
    ctx = seeded.ctx;
  }, 60_000);
  afterAll(async () => {
    await ctx.close();
    await seeded.test.drop();
  });

  it('leaves no address scored twice or missing once another worker finished the batch', async () => {
    const caller = { keyId: seeded.apiKey.id, accountId: seeded.account.id, prefix: seeded.apiKey.prefix, tier: 4 } as never;
    const batch = await ctx.batches.service.create(caller, seeded.scorer.id, { format: 'json', body: [JSON.stringify({ addresses: Array.from({ length: total }, (_, i) => addressNo(i)) })] });
    const settings = { DATA_DIR: dataDir, DATABASE_URL: seeded.test.url, BATCH_CHUNK_SIZE: '100', BATCH_LEASE_MS: '2000', BATCH_POLL_MS: '50', BATCH_CONCURRENCY: '2' };
    const doneItems = async () =>
      Number(
        (await ctx.database.db.selectFrom('batch_items').select((eb) => eb.fn.countAll<number>().as('n')).where('batch_id', '=', batch.id).where('state', '=', 'done').executeTakeFirstOrThrow()).n,
      );

    const first = start('worker 1', ['worker'], settings);
    await waitFor('a third of the batch', 60_000, async () => (await doneItems()) >= total / 3, 20);
    first.child.kill('SIGKILL');
    await first.exited;
    const atKill = await doneItems();
    expect(atKill, first.tail()).toBeLessThan(total);

    const second = start('worker 2', ['worker'], settings);
    try {
      await waitFor('the batch to finish', 90_000, async () => (await ctx.batches.repo.status(batch.id)) === 'DONE', 100);
    } finally {
      await second.stop('SIGTERM');
    }

    const items = await ctx.database.db.selectFrom('batch_items').selectAll().where('batch_id', '=', batch.id).orderBy('position').execute();
    expect(items).toHaveLength(total);
    expect(items.filter((item) => item.state !== 'done')).toEqual([]);
    const events = await ctx.database.db.selectFrom('score_events').select(['address', 'created_at']).where('scorer_id', '=', seeded.scorer.id).execute();
    const eventsOf = new Map<string, number[]>();
    for (const event of events) eventsOf.set(event.address, [...(eventsOf.get(event.address) ?? []), Number(event.created_at)]);
    const scores = new Map(
      (await ctx.database.db.selectFrom('scores').select(['address', 'last_score_timestamp']).where('scorer_id', '=', seeded.scorer.id).execute()).map((row) => [
        row.address,
        Number(row.last_score_timestamp),
      ]),
    );
    const storedBatch = await ctx.batches.repo.batchOf(batch.id);
    expect(storedBatch).toMatchObject({ status: 'DONE', done: total, failed: 0 });
    for (const item of items) {
      // One event: scored once (a second write would append or at least re-stamp the score row).
      expect(eventsOf.get(item.address), item.address).toHaveLength(1);
      const writtenAt = scores.get(item.address);
      expect(writtenAt).toBe(eventsOf.get(item.address)![0]);
      // The item's result (stored after commit, or rendered from the row if the kill came between) is that one scoring.
      const result = item.result === null ? null : (JSON.parse(item.result) as { last_score_timestamp: string });
      if (result) expect(Date.parse(result.last_score_timestamp)).toBe(writtenAt);
    }
    const streamed = await ctx.batches.service.results({ accountId: seeded.account.id }, batch.id, 'ndjson', 0);
    let lines = 0;
    for await (const text of streamed) lines += text.split('\n').length - 1;
    expect(lines).toBe(total);
    console.log(`${kind}: killed worker 1 with ${atKill}/${total} done; worker 2 finished the rest`);
  }, 180_000);
});
