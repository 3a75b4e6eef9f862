import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/processes.js';
import { batchUploadsRepository } from '../../../src/scoring/batches/batch-uploads.repository.js';
import { PackedAddresses } from '../../../src/scoring/batches/packed-addresses.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const day = 86_400_000;
const dayText = (at: number) => new Date(at).toISOString().slice(0, 10);

describe.each(databaseKinds)('batch retention on %s', (kind) => {
  let t: TestApp;
  let seeded: Awaited<ReturnType<typeof seedAccount>>;

  beforeEach(async () => {
    t = await createTestApp(kind, { BATCH_RETENTION_DAYS: '30', BATCH_CHUNK_SIZE: '2', BATCH_POLL_MS: '20', BATCH_DAILY_ADDRESSES: '100,100,100,100' });
    seeded = await seedAccount(t.ctx);
  });
  afterEach(async () => t.close());

  const get = (url: string) => t.app.inject({ url, headers: { 'x-api-key': seeded.key } });
  const rowsOf = async (id: string) => ({
    batches: (await t.ctx.database.db.selectFrom('batches').select('id').where('id', '=', id).execute()).length,
    items: (await t.ctx.database.db.selectFrom('batch_items').select('position').where('batch_id', '=', id).execute()).length,
    chunks: (await t.ctx.database.db.selectFrom('batch_chunks').select('id').where('batch_id', '=', id).execute()).length,
  });

  async function finishedBatch(size: number): Promise<string> {
    const created = await t.app.inject({
      method: 'POST',
      url: `/v2/scorers/${seeded.scorer.id}/batches`,
      headers: { 'x-api-key': seeded.key },
      payload: { addresses: Array.from({ length: size }, (_, i) => addressNo(i + 1)) },
    });
    expect(created.statusCode, created.body).toBe(202);
    return created.json().id;
  }

  it('deletes a batch that ended more than the retention ago with its items and chunks, keeps a newer one, answers 404 for the deleted one, and gives no quota back', async () => {
    const old = await finishedBatch(5);
    const recent = await finishedBatch(3);
    t.ctx.batches.worker.start();
    await waitFor('both batches done', 30_000, async () => (await get(`/v2/batches/${old}`)).json().status === 'DONE' && (await get(`/v2/batches/${recent}`)).json().status === 'DONE', 20);
    await t.ctx.batches.worker.stop();
    // The old batch ended 31 days ago, the recent one 29 days ago; a usage row of the old batch's day too.
    const now = Date.now();
    await t.ctx.database.db.updateTable('batches').set({ finished_at: now - 31 * day }).where('id', '=', old).execute();
    await t.ctx.database.db.updateTable('batches').set({ finished_at: now - 29 * day }).where('id', '=', recent).execute();
    await t.ctx.database.db.insertInto('batch_usage').values({ account_id: seeded.account.id, day: dayText(now - 31 * day), addresses: 5 }).execute();
    const usedToday = await t.ctx.batches.repo.usage(seeded.account.id, dayText(now));
    expect(usedToday).toBe(8);

    // Past its retention a batch is gone for readers at once, before the sweep deleted it.
    for (const url of [`/v2/batches/${old}`, `/v2/batches/${old}/results`]) {
      const res = await get(url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 'batch_not_found', detail: expect.any(String) });
    }
    expect(await rowsOf(old)).toEqual({ batches: 1, items: 5, chunks: 3 });

    const swept = await t.ctx.batches.worker.retention!.sweep();
    expect(swept).toMatchObject({ batches: 1, usageRows: 1 });
    expect(await rowsOf(old)).toEqual({ batches: 0, items: 0, chunks: 0 });
    expect(await rowsOf(recent)).toEqual({ batches: 1, items: 3, chunks: 2 });
    for (const url of [`/v2/batches/${old}`, `/v2/batches/${old}/results`]) expect((await get(url)).statusCode).toBe(404);
    expect((await get(`/v2/batches/${recent}`)).json()).toMatchObject({ status: 'DONE', done: 3 });
    expect((await get(`/v2/batches/${recent}/results`)).body.trimEnd().split('\n')).toHaveLength(3);
    // Today's usage is what the quota reads: unchanged by the deletion.
    expect(await t.ctx.batches.repo.usage(seeded.account.id, dayText(now))).toBe(usedToday);
    expect(await t.ctx.batches.repo.usage(seeded.account.id, dayText(now - 31 * day))).toBe(0);
  });

  it('keeps a running batch however old, and deletes the items of an upload abandoned over an hour ago, not of one under way', async () => {
    const running = await finishedBatch(4);
    await t.ctx.database.db.updateTable('batches').set({ created_at: Date.now() - 60 * day }).where('id', '=', running).execute();
    const uploads = batchUploadsRepository(t.ctx.database);
    const stale = { id: 'bat_abandonedupld001', accountId: seeded.account.id, keyId: seeded.apiKey.id, scorerId: seeded.scorer.id, createdAt: Date.now() - 2 * 3_600_000, day: dayText(Date.now()), dailyQuota: 100 };
    const live = { ...stale, id: 'bat_liveupload000001', createdAt: Date.now() };
    for (const upload of [stale, live]) {
      await uploads.beginUpload(upload);
      await uploads.insertItems(upload.id, 0, PackedAddresses.of([addressNo(1), addressNo(2)]).slice(0, 2));
    }
    // Neither upload is a batch: nothing to claim or read.
    expect(await t.ctx.batches.repo.claimChunk('test-owner', Date.now(), 1000)).toMatchObject({ batch_id: running });
    expect((await get(`/v2/batches/${stale.id}`)).statusCode).toBe(404);

    const swept = await t.ctx.batches.worker.retention!.sweep();
    expect(swept).toMatchObject({ batches: 0, uploads: 1 });
    expect(await rowsOf(stale.id)).toEqual({ batches: 0, items: 0, chunks: 0 });
    expect((await rowsOf(live.id)).items).toBe(2);
    expect(await rowsOf(running)).toEqual({ batches: 1, items: 4, chunks: 2 });
    expect((await t.ctx.database.db.selectFrom('batch_uploads').select('batch_id').execute()).map((r) => r.batch_id)).toEqual([live.id]);
  });
});
