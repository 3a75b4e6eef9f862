import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/connection.js';
import { SCORE_COUNT_BUCKET_MS as MIGRATION_BUCKET_MS } from '../../../src/db/migrations/0031-score-counts.js';
import { SCORE_COUNT_BUCKET_MS, type ScoreListFilter, scoresRepository } from '../../../src/scoring/scores/scores.repository.js';
import { databaseKinds, openMigratedTestDatabase, type TestDatabase } from '../../helpers/databases.js';

const H = SCORE_COUNT_BUCKET_MS;
const start = Date.UTC(2026, 10, 20, 0, 0, 0, 0);

/** A seeded generator, so that a failure replays. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe.each(databaseKinds)('the score list count from score_counts, on %s', (kind) => {
  let test: TestDatabase;
  let database: Database;
  let db: Kysely<any>;
  const next = random(20261207);
  /** A time over 12 hours, often on or next to an hour's edge. */
  const time = (): number => {
    const hour = start + Math.floor(next() * 12) * H;
    const edge = next();
    if (edge < 0.15) return hour;
    if (edge < 0.3) return hour - 1;
    if (edge < 0.4) return hour + 1;
    return hour + Math.floor(next() * H);
  };

  beforeEach(async () => {
    ({ test, database } = await openMigratedTestDatabase(kind));
    db = database.db as unknown as Kysely<any>;
  });
  afterEach(async () => {
    await database.close();
    await test.drop();
  });

  async function newScorer(name: string): Promise<{ accountId: number; scorerId: number }> {
    const account = await db.insertInto('accounts').values({ name, created_at: 1 }).returning('id').executeTakeFirstOrThrow();
    const scorer = await db
      .insertInto('scorers')
      .values({ account_id: account.id, name, type: 'weighted', threshold: '20.00000', created_at: 1, updated_at: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { accountId: Number(account.id), scorerId: Number(scorer.id) };
  }

  const row = (scorerId: number, n: number, at: number) => ({ scorer_id: scorerId, address: `0x${n.toString(16).padStart(40, '0')}`, status: 'DONE', last_score_timestamp: at });

  /** Every filter the list takes (whole ms, as parsed from the query), random and on the edges, each compared with a plain COUNT(*). */
  async function expectExactCounts(scorerIds: number[]): Promise<void> {
    const repo = scoresRepository(database.db);
    const edges = [undefined, start - 5 * H, start - 1, start, start + 1, start + 3 * H - 1, start + 3 * H, start + 3 * H + 2, start + 11 * H + H - 1, start + 12 * H, start + 100 * H];
    const filters: Omit<ScoreListFilter, 'limit' | 'offset'>[] = [];
    for (const after of edges) for (const atOrAfter of [undefined, start + 3 * H, start + 5 * H + 7]) filters.push({ after, atOrAfter });
    for (let i = 0; i < 40; i += 1) filters.push({ after: next() < 0.7 ? time() : undefined, atOrAfter: next() < 0.4 ? time() : undefined });
    filters.push({ address: row(0, 3, 0).address }, { address: row(0, 3, 0).address, after: start + 2 * H });
    for (const scorerId of scorerIds) {
      for (const filter of filters) {
        let plain = db.selectFrom('scores').select((eb) => eb.fn.countAll().as('n')).where('scorer_id', '=', scorerId);
        if (filter.after !== undefined) plain = plain.where('last_score_timestamp', '>', filter.after);
        if (filter.atOrAfter !== undefined) plain = plain.where('last_score_timestamp', '>=', filter.atOrAfter);
        if (filter.address !== undefined) plain = plain.where('address', '=', filter.address);
        const expected = Number((await plain.executeTakeFirstOrThrow()).n);
        const { count, rows } = await repo.list(scorerId, { ...filter, limit: 5, offset: 0 });
        expect({ scorerId, filter, count }).toEqual({ scorerId, filter, count: expected });
        expect(rows.length).toBe(Math.min(5, expected));
      }
    }
  }

  it('uses the shipped bucket', () => {
    expect(SCORE_COUNT_BUCKET_MS).toBe(MIGRATION_BUCKET_MS);
  });

  it('stays equal to COUNT(*) through inserts, bulk inserts, re-scorings, deletes and an account deletion', async () => {
    const a = await newScorer('a');
    const b = await newScorer('b');
    // One at a time, and as the scale build does: multi-row inserts.
    for (let n = 0; n < 40; n += 1) await db.insertInto('scores').values(row(a.scorerId, n, time())).execute();
    await db.insertInto('scores').values(Array.from({ length: 300 }, (_, n) => row(a.scorerId, 1000 + n, time()))).execute();
    await db.insertInto('scores').values(Array.from({ length: 200 }, (_, n) => row(b.scorerId, n, time()))).execute();
    await expectExactCounts([a.scorerId, b.scorerId]);
    const summed = await db.selectFrom('score_counts').select((eb) => eb.fn.sum('n').as('n')).where('scorer_id', '=', a.scorerId).executeTakeFirstOrThrow();
    expect(Number(summed.n)).toBe(340);

    // Re-scorings: single updates, one multi-row update moving rows between hours, and the upsert the scoring writes.
    for (let n = 0; n < 30; n += 1) {
      await db.updateTable('scores').set({ last_score_timestamp: time() }).where('scorer_id', '=', a.scorerId).where('address', '=', row(0, n, 0).address).execute();
    }
    await db.updateTable('scores').set({ last_score_timestamp: sql`last_score_timestamp + ${2 * H}` }).where('scorer_id', '=', b.scorerId).where('address', '<', row(0, 80, 0).address).execute();
    await db.updateTable('scores').set({ status: 'ERROR' }).where('scorer_id', '=', b.scorerId).execute();
    for (let n = 1290; n < 1310; n += 1) {
      await db
        .insertInto('scores')
        .values(row(a.scorerId, n, time()))
        .onConflict((oc) => oc.columns(['scorer_id', 'address']).doUpdateSet((eb) => ({ last_score_timestamp: eb.ref('excluded.last_score_timestamp') })))
        .execute();
    }
    await expectExactCounts([a.scorerId, b.scorerId]);

    await db.deleteFrom('scores').where('scorer_id', '=', a.scorerId).where('address', '<', row(0, 1100, 0).address).execute();
    await db.deleteFrom('scores').where('scorer_id', '=', a.scorerId).where('address', '=', row(0, 1200, 0).address).execute();
    // An account's deletion cascades to its scorers and their scores.
    await db.deleteFrom('accounts').where('id', '=', b.accountId).execute();
    expect(Number((await db.selectFrom('scores').select((eb) => eb.fn.countAll().as('n')).where('scorer_id', '=', b.scorerId).executeTakeFirstOrThrow()).n)).toBe(0);
    await expectExactCounts([a.scorerId, b.scorerId]);

    // A scorer created now is counted from its first score.
    const c = await newScorer('c');
    await db.insertInto('scores').values(Array.from({ length: 50 }, (_, n) => row(c.scorerId, n, time()))).execute();
    expect(await db.selectFrom('score_counts_ready').select('scorer_id').where('scorer_id', '=', c.scorerId).executeTakeFirst()).toBeDefined();
    await expectExactCounts([a.scorerId, c.scorerId]);
  });

  it('stays exact under concurrent scorings of the current hour, in transactions on several connections', async () => {
    const a = await newScorer('a');
    await db.insertInto('scores').values(Array.from({ length: 100 }, (_, n) => row(a.scorerId, n, time()))).execute();
    const now = start + 12 * H + 5;
    // Re-scorings of old rows and first scorings, each a transaction, all at once.
    await Promise.all(
      Array.from({ length: 60 }, (_, n) =>
        db.transaction().execute(async (trx) => {
          await trx
            .insertInto('scores')
            .values(row(a.scorerId, n * 2, now + n))
            .onConflict((oc) => oc.columns(['scorer_id', 'address']).doUpdateSet({ last_score_timestamp: now + n }))
            .execute();
          await trx.insertInto('scores').values(row(a.scorerId, 5000 + n, now)).execute();
        }),
      ),
    );
    await expectExactCounts([a.scorerId]);
    const shards = await db.selectFrom('score_counts').select('shard').distinct().where('scorer_id', '=', a.scorerId).execute();
    if (kind === 'postgres') expect(shards.length).toBeGreaterThan(1);
    else expect(shards.map((r) => Number(r.shard))).toEqual([0]);
  });

  it('counts from the index while a scorer is not marked complete', async () => {
    const a = await newScorer('a');
    await db.insertInto('scores').values(Array.from({ length: 30 }, (_, n) => row(a.scorerId, n, time()))).execute();
    // As between the triggers' creation and this scorer's backfill: its summary misses rows.
    await db.deleteFrom('score_counts_ready').where('scorer_id', '=', a.scorerId).execute();
    await db.deleteFrom('score_counts').where('scorer_id', '=', a.scorerId).execute();
    await expectExactCounts([a.scorerId]);
  });
});
