import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { operator } from '../../../src/scoring/batches/batches.service.js';
import { createV2Services } from '../../../src/scoring/scores/v2.module.js';
import { stampsRepository } from '../../../src/scoring/stamps/stamps.repository.js';
import { NullifierTaken } from '../../../src/scoring/records/score-records.repository.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/processes.js';
import { giveStamps } from '../../helpers/stamps.js';

const addressNo = (n: number) => '0x' + (0xc0000 + n).toString(16).padStart(40, '0');
const hour = 3_600_000;

/** A v2 answer without what differs between two scorings of the same stamps at two moments. */
function timeless(answer: Record<string, unknown>) {
  const { last_score_timestamp: _at, ...rest } = answer;
  return rest;
}

// A batch's addresses are scored together, a step of them at a time (v2ScoreService.scoreChunk):
// these tests hold its outcome to that of scoring the same addresses one after the other.
describe.each(databaseKinds)('batch chunk scoring on %s', (kind) => {
  let t: TestApp;
  let accountId: number;
  let together: number;
  let oneByOne: number;

  beforeEach(async () => {
    t = await createTestApp(kind, { BATCH_CHUNK_SIZE: '250', BATCH_POLL_MS: '20' });
    const seeded = await seedAccount(t.ctx);
    accountId = seeded.account.id;
    together = seeded.scorer.id;
    oneByOne = (await t.ctx.accounts.createScorer(accountId, { name: 'one by one', type: 'weighted' })).id;
  });
  afterEach(async () => t.close());

  /** Addresses that exercise deduplication inside the chunk and against holds, re-scoring, expiry and duplicates. */
  async function population(): Promise<string[]> {
    await giveStamps(t.ctx, addressNo(1), [{ provider: 'Google', nullifiers: ['v0:shared-google'] }, 'Ens']);
    // Shares Google's nullifier with address 1, which comes first: it is deduplicated.
    await giveStamps(t.ctx, addressNo(2), [{ provider: 'Google', nullifiers: ['v0:shared-google'] }, 'Github']);
    await giveStamps(t.ctx, addressNo(3), ['Discord', 'Linkedin']);
    // Holds a nullifier before the batch, for both scorers; address 6 presents it later.
    await giveStamps(t.ctx, addressNo(7), [{ provider: 'Twitter', nullifiers: ['v0:held-before'] }]);
    await giveStamps(t.ctx, addressNo(6), [{ provider: 'Twitter', nullifiers: ['v0:held-before'] }, 'Brightid']);
    // Two nullifiers, one shared with address 2 (taken by address 1 already) and one its own.
    await giveStamps(t.ctx, addressNo(8), [{ provider: 'Google', nullifiers: ['v0:shared-google', 'v1:own-google'] }]);
    await giveStamps(t.ctx, addressNo(9), [{ provider: 'Ens', expiresInMs: 2 * hour }, 'Github']);
    for (const scorer of [together, oneByOne]) {
      await t.ctx.v2.scores.scoreNow(scorer, accountId, addressNo(3));
      await t.ctx.v2.scores.scoreNow(scorer, accountId, addressNo(7));
    }
    return [1, 2, 3, 4, 1, 6, 7, 8, 9, 2, 5].map(addressNo);
  }

  async function runBatch(scorerId: number, addresses: string[]) {
    const { batch } = await t.ctx.batches.service.createAsOperator(scorerId, { addresses });
    t.ctx.batches.worker.start();
    await waitFor(`batch ${batch.id} done`, 30_000, async () => (await t.ctx.batches.service.get(operator, batch.id)).status === 'DONE', 20);
    const items = await t.ctx.batches.repo.resultsPage(batch.id, 0, 1000);
    return { batch: await t.ctx.batches.service.get(operator, batch.id), items };
  }

  const tables = async (scorerId: number) => {
    const { db } = t.ctx.database;
    const holds = await db.selectFrom('nullifier_holds').select(['nullifier', 'address', 'expires_at']).where('scorer_id', '=', scorerId).orderBy('nullifier').execute();
    const rows = await db
      .selectFrom('scores')
      .select(['address', 'status', 'score', 'raw_score', 'passing', 'threshold', 'evidence', 'stamp_scores', 'stamps', 'expiration_date', 'error'])
      .where('scorer_id', '=', scorerId)
      .orderBy('address')
      .execute();
    const events = await db
      .selectFrom('score_events')
      .select(['address', 'type', 'status', 'score', 'raw_score', 'passing', 'stamps', 'evidence', 'error'])
      .where('scorer_id', '=', scorerId)
      .orderBy('id')
      .execute();
    const pointers = await db
      .selectFrom('scores')
      .innerJoin('score_events', 'score_events.id', 'scores.event_id')
      .select(['scores.address', 'score_events.address as event_address', 'score_events.scorer_id'])
      .where('scores.scorer_id', '=', scorerId)
      .execute();
    return { holds: holds.map((h) => ({ ...h, expires_at: Number(h.expires_at) })), rows: rows.map((r) => ({ ...r, expiration_date: r.expiration_date === null ? null : Number(r.expiration_date) })), events, pointers };
  };

  it('answers, holds, rows and events equal those of scoring the addresses one after the other, without scoring any address alone', async () => {
    const addresses = await population();
    const scoreNow = vi.spyOn(t.ctx.v2.scores, 'scoreNow');
    const scoreChunk = vi.spyOn(t.ctx.v2.scores, 'scoreChunk');
    const { batch, items } = await runBatch(together, addresses);
    expect(batch).toMatchObject({ status: 'DONE', total: addresses.length, done: addresses.length, failed: 0 });
    expect(scoreChunk).toHaveBeenCalledTimes(1);
    expect(scoreNow).not.toHaveBeenCalled();
    scoreNow.mockRestore();

    const sequential = [];
    for (const address of addresses) sequential.push((await t.ctx.v2.scores.scoreNow(oneByOne, accountId, address)).score);
    const answers = items.map((item) => JSON.parse(item.result!));
    expect(answers.map(timeless)).toEqual(sequential.map((s) => timeless(JSON.parse(JSON.stringify(s)))));
    // The shared nullifier counted once, for the first address presenting it.
    expect(answers[1].stamps.Google.dedup).toBe(true);
    expect(answers[0].stamps.Google.dedup).toBe(false);
    expect(answers[5].stamps.Twitter.dedup).toBe(true);
    // A duplicate is answered with the same object as its first occurrence.
    expect(answers[4]).toEqual(answers[0]);
    expect(answers[9]).toEqual(answers[1]);

    const [a, b] = [await tables(together), await tables(oneByOne)];
    expect(a.holds).toEqual(b.holds);
    expect(a.holds.find((h) => h.nullifier === 'v0:shared-google')?.address).toBe(addressNo(1));
    expect(a.rows).toEqual(b.rows);
    expect(a.events).toEqual(b.events);
    // One event per distinct address: the re-scored ones (3 and 7) unchanged, so only their first.
    expect(new Set(a.events.map((e) => e.address)).size).toBe(a.events.length);
    expect(a.pointers).toHaveLength(new Set(addresses).size);
    for (const pointer of a.pointers) expect(pointer).toMatchObject({ event_address: pointer.address, scorer_id: together });
    // The item's result is the row as stored: the v2 read answers the same now.
    expect((await t.ctx.v2.scores.scoreNow(together, accountId, addressNo(1))).written).toBe(false);
  });

  it('scores a chunk in steps of 100 addresses, each step one write, and its webhook outbox gets one row per event', async () => {
    const addresses = Array.from({ length: 230 }, (_, i) => addressNo(100 + i));
    for (const address of addresses.slice(0, 40)) await giveStamps(t.ctx, address, ['Google', 'Ens']);
    const scoreChunk = vi.spyOn(t.ctx.v2.scores, 'scoreChunk');
    const { batch, items } = await runBatch(together, addresses);
    expect(batch).toMatchObject({ status: 'DONE', done: 230, failed: 0 });
    expect(scoreChunk.mock.calls.map((call) => call[2].length)).toEqual([100, 100, 30]);
    expect(items.map((item) => JSON.parse(item.result!).address)).toEqual(addresses);
    const outbox = await t.ctx.database.db.selectFrom('webhook_outbox').select(['event_id']).where('scorer_id', '=', together).orderBy('event_id').execute();
    const events = await t.ctx.database.db.selectFrom('score_events').select(['id']).where('scorer_id', '=', together).orderBy('id').execute();
    expect(outbox.map((row) => Number(row.event_id))).toEqual(events.map((row) => Number(row.id)));
    expect(events).toHaveLength(230);
  });

  it('scores the step one address at a time when it cannot be scored together (a hold taken meanwhile), with the same outcome', async () => {
    const addresses = await population();
    vi.spyOn(t.ctx.v2.scores, 'scoreChunk').mockRejectedValueOnce(new NullifierTaken());
    const scoreNow = vi.spyOn(t.ctx.v2.scores, 'scoreNow');
    const { batch, items } = await runBatch(together, addresses);
    expect(batch).toMatchObject({ status: 'DONE', done: addresses.length, failed: 0 });
    expect(scoreNow).toHaveBeenCalledTimes(addresses.length);
    scoreNow.mockRestore();
    for (const address of addresses) await t.ctx.v2.scores.scoreNow(oneByOne, accountId, address);
    const [a, b] = [await tables(together), await tables(oneByOne)];
    expect(a.holds).toEqual(b.holds);
    expect(a.events).toEqual(b.events);
    expect(items.every((item) => item.state === 'done')).toBe(true);
  });

  it('a hold another address took between the reads and the write rolls the whole step back (NullifierTaken), writing nothing', async () => {
    await giveStamps(t.ctx, addressNo(1), [{ provider: 'Google', nullifiers: ['v0:race'] }]);
    await giveStamps(t.ctx, addressNo(2), ['Ens']);
    await giveStamps(t.ctx, addressNo(3), [{ provider: 'Google', nullifiers: ['v0:race'] }]);
    const { database } = t.ctx;
    // Address 3 scores (and takes the nullifier) after the chunk read the holds and before it writes.
    const stamps = stampsRepository(database);
    const holdsOfNullifiers = stamps.holdsOfNullifiers;
    stamps.holdsOfNullifiers = async (...args) => {
      const holds = await holdsOfNullifiers(...args);
      await t.ctx.v2.scores.scoreNow(together, accountId, addressNo(3));
      return holds;
    };
    const { scores } = createV2Services(database, { stamps, issuers: t.ctx.issuers, catalogue: t.ctx.catalogue, accounts: t.ctx.accounts });
    const finish = vi.fn(async () => {});
    await expect(scores.scoreChunk(together, accountId, [addressNo(1), addressNo(2)], finish)).rejects.toBeInstanceOf(NullifierTaken);
    expect(finish).not.toHaveBeenCalled();
    const rows = await database.db.selectFrom('scores').select('address').where('scorer_id', '=', together).execute();
    expect(rows.map((r) => r.address)).toEqual([addressNo(3)]);
    const holds = await database.db.selectFrom('nullifier_holds').select(['address']).where('scorer_id', '=', together).execute();
    expect(holds.map((h) => h.address)).toEqual([addressNo(3)]);
  });
});
