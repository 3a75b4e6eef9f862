import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { SCORE_COUNT_BUCKET_MS as H, scoreCounts } from '../../src/db/migrations/0031-score-counts.js';
import { createTestDatabase, databaseKinds, migrateUpTo, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('0031-score-counts on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('backfills the counts of the scores already stored, marks every scorer complete, and can run again', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0030-push-after-batch');
      const db = database.db as unknown as Kysely<any>;
      const account = await db.insertInto('accounts').values({ name: 'a', created_at: 1 }).returning('id').executeTakeFirstOrThrow();
      const scorerIds: number[] = [];
      for (const name of ['one', 'two', 'empty']) {
        const scorer = await db
          .insertInto('scorers')
          .values({ account_id: account.id, name, type: 'weighted', threshold: '1.00000', created_at: 1, updated_at: 1 })
          .returning('id')
          .executeTakeFirstOrThrow();
        scorerIds.push(Number(scorer.id));
      }
      const [one, two] = scorerIds as [number, number];
      const start = Date.UTC(2026, 0, 1);
      const rows = Array.from({ length: 600 }, (_, n) => ({
        scorer_id: n % 3 === 0 ? two : one,
        address: `0x${n.toString(16).padStart(40, '0')}`,
        status: 'DONE',
        last_score_timestamp: start + ((n * 7919) % 50) * (H / 4) + (n % 2),
      }));
      await db.insertInto('scores').values(rows).execute();

      const lines: string[] = [];
      expect(await migrateToLatest(database, { progress: (line) => lines.push(line) })).toEqual(['0031-score-counts']);
      expect(lines.some((line) => line.includes('score_counts: 3 of 3 scorers counted'))).toBe(true);

      const counted = async () =>
        (
          await db
            .selectFrom('score_counts')
            .select(['scorer_id', 'bucket', (eb) => eb.fn.sum('n').as('n')])
            .groupBy(['scorer_id', 'bucket'])
            .having((eb) => eb.fn.sum('n'), '<>', 0)
            .orderBy('scorer_id')
            .orderBy('bucket')
            .execute()
        ).map((r) => [Number(r.scorer_id), Number(r.bucket), Number(r.n)]);
      const expected = new Map<string, number>();
      for (const row of rows) {
        const key = `${row.scorer_id}:${Math.floor(row.last_score_timestamp / H)}`;
        expected.set(key, (expected.get(key) ?? 0) + 1);
      }
      const expectedRows = [...expected].map(([key, n]) => [...key.split(':').map(Number), n]).sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!);
      expect(await counted()).toEqual(expectedRows);
      const ready = (await db.selectFrom('score_counts_ready').select('scorer_id').orderBy('scorer_id').execute()).map((r) => Number(r.scorer_id));
      expect(ready).toEqual(scorerIds);

      // A rerun after a crash before a scorer was marked rebuilds it, with the triggers in place.
      await db.deleteFrom('score_counts_ready').where('scorer_id', '=', two).execute();
      await sql`update score_counts set n = n + 5 where scorer_id = ${two}`.execute(db);
      await scoreCounts(kind).up(db);
      expect(await counted()).toEqual(expectedRows);
      expect((await db.selectFrom('score_counts_ready').select('scorer_id').execute()).length).toBe(3);
      await db.insertInto('scores').values({ ...rows[0], address: '0xnew' }).execute();
      const after = await counted();
      expect(after.reduce((sum, r) => sum + r[2]!, 0)).toBe(601);
    } finally {
      await database.close();
    }
  });
});
