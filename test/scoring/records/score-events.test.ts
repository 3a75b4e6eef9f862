import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeTransaction } from '../../../src/db/connection.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { giveStamps, testWallet } from '../../helpers/stamps.js';

const day = 86_400_000;
const alice = testWallet(1501).address;
const bob = testWallet(1502).address;
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

describe.each(databaseKinds)('score event log and v2 synchronous scoring on %s', (kind) => {
  let t: TestApp;
  let scorerId: number;
  let accountId: number;

  beforeEach(async () => {
    t = await createTestApp(kind);
    const account = await t.ctx.accounts.createAccount('Events');
    accountId = account.id;
    const scorer = await t.ctx.accounts.createScorer(account.id, {
      name: 'v2',
      threshold: '20',
      weights: { Google: '12.345675', Discord: '8', Ens: '3' },
    });
    scorerId = scorer.id;
  });
  afterEach(async () => t.close());

  const events = (address?: string) => {
    let q = t.ctx.database.db.selectFrom('score_events').selectAll().where('scorer_id', '=', scorerId);
    if (address) q = q.where('address', '=', address);
    return q.orderBy('id').execute();
  };
  const scoreNow = (address: string, options = {}) => t.ctx.v2.scores.scoreNow(scorerId, accountId, address, options);

  it('scores an address with stored stamps and no submission: exact raw sum, threshold, breakdown with a deduplicated stamp', async () => {
    const ensExpiry = Date.now() + 30 * day;
    // Bob holds the Ens nullifier first, so Alice's Ens stamp is deduplicated.
    await giveStamps(t.ctx, bob, [{ provider: 'Ens', nullifiers: ['v0:shared-ens'] }]);
    expect((await scoreNow(bob)).written).toBe(true);
    await giveStamps(t.ctx, alice, [
      { provider: 'Google', expiresInMs: 10 * day },
      { provider: 'Discord', expiresInMs: 20 * day },
      { provider: 'Ens', nullifiers: ['v0:shared-ens'], expiresInMs: 30 * day },
    ]);
    const { score, written } = await scoreNow(alice);
    expect(written).toBe(true);
    expect(score).toMatchObject({
      address: alice,
      score: '20.34568',
      passing_score: true,
      threshold: '20.00000',
      error: null,
      points_data: null,
      possible_points_data: null,
    });
    expect(Object.keys(score.stamps)).toEqual(['Discord', 'Ens', 'Google']);
    expect(score.stamps.Google).toMatchObject({ score: '12.34568', dedup: false });
    expect(score.stamps.Discord).toMatchObject({ score: '8.00000', dedup: false });
    expect(score.stamps.Ens).toMatchObject({ score: '0.00000', dedup: true });
    // Within a second of the issued expiry (the helper computes its own Date.now()).
    expect(Math.abs(Date.parse(score.stamps.Ens!.expiration_date) - ensExpiry)).toBeLessThan(5_000);
    // The earliest expiry among the counted stamps: Google's, not the deduplicated Ens.
    expect(score.expiration_timestamp).toBe(score.stamps.Google!.expiration_date);

    // The same score is visible through v1.
    const v1 = await t.ctx.scores.getScore(scorerId, accountId, alice);
    expect(v1).toMatchObject({ status: 'DONE', score: '20.34568', error: null });
    expect(JSON.parse(v1.stamp_scores!)).toEqual({ Discord: '8.00000', Google: '12.34568' });
    expect(iso(Number(v1.last_score_timestamp))).toBe(score.last_score_timestamp);

    const [event] = await events(alice);
    expect(event).toMatchObject({ type: 'score.updated', status: 'DONE', score: '20.34568', raw_score: '20.34568', threshold: '20.00000' });
    expect(Number(event!.passing)).toBe(1);
    expect(JSON.parse(event!.stamps)).toEqual(score.stamps);
    expect(Number(v1.event_id)).toBe(Number(event!.id));
  });

  it('a re-score with nothing changed writes nothing and appends no event; a change appends one', async () => {
    await giveStamps(t.ctx, alice, ['Google']);
    const first = await scoreNow(alice);
    expect(first.written).toBe(true);
    const again = await scoreNow(alice);
    expect([again.score, again.written]).toEqual([first.score, false]);
    expect(await events(alice)).toHaveLength(1);

    await giveStamps(t.ctx, alice, ['Discord']);
    const changed = await scoreNow(alice);
    expect(changed.written).toBe(true);
    expect(changed.score.score).toBe('20.34568');
    const log = await events(alice);
    expect(log.map((e) => e.score)).toEqual(['12.34568', '20.34568']);
    expect(Number(log[1]!.id)).toBeGreaterThan(Number(log[0]!.id));
  });

  it('v1 job completion goes through the same path: an unchanged re-submission appends no event', async () => {
    t.ctx.worker.start();
    await giveStamps(t.ctx, alice, ['Google', 'Discord']);
    await t.ctx.scores.submit(scorerId, alice);
    await waitDone(alice);
    expect((await events(alice)).map((e) => [e.status, e.score])).toEqual([['DONE', '20.34568']]);
    // Re-submission: the row goes through PROCESSING (not an event) and back to the same result.
    await t.ctx.scores.submit(scorerId, alice);
    await waitDone(alice);
    expect(await events(alice)).toHaveLength(1);
    // v2 sees the stored result as current: no write.
    expect((await scoreNow(alice)).written).toBe(false);
  });

  it('the batch hook runs inside the write transaction: if it fails, neither the score nor the event is kept', async () => {
    await giveStamps(t.ctx, alice, ['Google']);
    let sawEvent = 0;
    await expect(
      scoreNow(alice, {
        withinTransaction: async (trx: any) => {
          sawEvent = (await trx.selectFrom('score_events').select('id').where('address', '=', alice).execute()).length;
          throw new Error('batch item failed');
        },
      }),
    ).rejects.toThrow('batch item failed');
    expect(sawEvent).toBe(1);
    expect(await events(alice)).toHaveLength(0);
    expect(await t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', alice).execute()).toHaveLength(0);
  });

  it('a failed scoring is an ERROR event; a later success clears it with another event', async () => {
    const now = Date.now();
    await writeTransaction(t.ctx.database, (trx) =>
      t.ctx.v2.events.recordScoring(trx, scorerId, alice, { status: 'ERROR', error: 'It broke.', threshold: '20.00000' }, now),
    );
    const row = await t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', alice).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'ERROR', score: null, error: 'It broke.', stamp_scores: '{}' });
    await giveStamps(t.ctx, alice, ['Google']);
    const { score } = await scoreNow(alice);
    expect(score.error).toBeNull();
    const log = await events(alice);
    expect(log.map((e) => [e.status, e.score, e.error])).toEqual([
      ['ERROR', null, 'It broke.'],
      ['DONE', '12.34568', null],
    ]);
  });

  it('a scorer of another account is not found, and nothing is written', async () => {
    const other = await t.ctx.accounts.createAccount('Other');
    await giveStamps(t.ctx, alice, ['Google']);
    await expect(t.ctx.v2.scores.scoreNow(scorerId, other.id, alice)).rejects.toMatchObject({ code: 'scorer_not_found' });
    expect(await events()).toHaveLength(0);
  });

  // The advisory lock exists on PostgreSQL only (SQLite has one writer), so the test is defined there only.
  if (kind === 'postgres') {
    it('appends of one scorer wait for each other (ids commit in order); another scorer does not wait', async () => {
      const other = await t.ctx.accounts.createScorer(accountId, { name: 'other' });
      const error = (text: string) => ({ status: 'ERROR' as const, error: text, threshold: '20.00000' });
      const record = (scorer: number, address: string, text: string, within?: () => Promise<void>) =>
        writeTransaction(t.ctx.database, (trx) => t.ctx.v2.events.recordScoring(trx, scorer, address, error(text), Date.now(), { withinTransaction: within }));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const order: string[] = [];
      const first = record(scorerId, alice, 'first', async () => {
        entered();
        await held;
        order.push('first commits');
      });
      await inside;
      const second = record(scorerId, bob, 'second').then((r) => (order.push('second done'), r));
      // Another scorer's append goes through while the first transaction holds its scorer's lock.
      await record(other.id, bob, 'other scorer');
      order.push('other scorer done');
      // The second append of the same scorer is waiting on the advisory lock.
      const { sql } = await import('kysely');
      for (let i = 0; ; i++) {
        const waiting = await sql<{ n: string }>`select count(*) as n from pg_locks where locktype = 'advisory' and not granted`.execute(t.ctx.database.db);
        if (Number(waiting.rows[0]!.n) > 0) break;
        if (i > 400) throw new Error('the second append never waited');
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(order).toEqual(['other scorer done']);
      release();
      const [a, b] = await Promise.all([first, second]);
      expect(order).toEqual(['other scorer done', 'first commits', 'second done']);
      expect(b.appendedEventId!).toBeGreaterThan(a.appendedEventId!);
    });
  }

  async function waitDone(address: string) {
    for (let i = 0; i < 200; i++) {
      const row = await t.ctx.database.db.selectFrom('scores').select('status').where('scorer_id', '=', scorerId).where('address', '=', address).executeTakeFirst();
      if (row && row.status !== 'PROCESSING') return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('scoring did not finish');
  }
});
