import { type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, databaseKinds, migrateUpTo, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('0012-scorer-settings on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('keeps every scorer and everything that references one, gives them settings {}, and accepts any type name', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0011-security');
      const db = database.db as unknown as Kysely<any>;
      const account = await db.insertInto('accounts').values({ name: 'old', created_at: 1 }).returning('id').executeTakeFirstOrThrow();
      const scorer = (type: string) => ({ account_id: account.id, name: type, type, threshold: '20', weights: '{"Google":"2"}', requires_signature: 1, created_at: 1, updated_at: 2 });
      const [first, second] = (await db.insertInto('scorers').values([scorer('weighted'), scorer('binary')]).returning('id').execute()) as [{ id: number }, { id: number }];
      await expect(db.insertInto('scorers').values(scorer('capped')).execute()).rejects.toThrow();
      const score = (scorerId: number) => ({ scorer_id: scorerId, address: '0x01', status: 'DONE', score: '1.00000', evidence: null, error: null, last_score_timestamp: 1 });
      await db.insertInto('scores').values([score(first.id), score(second.id)]).execute();

      expect((await migrateToLatest(database))[0]).toBe('0012-scorer-settings');
      const scorers = await db.selectFrom('scorers').selectAll().orderBy('id').execute();
      expect(scorers.map((s) => [s.name, s.type, s.weights, Number(s.requires_signature), Number(s.updated_at), s.settings])).toEqual([
        ['weighted', 'weighted', '{"Google":"2"}', 1, 2, '{}'],
        ['binary', 'binary', '{"Google":"2"}', 1, 2, '{}'],
      ]);
      // The rebuild on SQLite must not have cascaded into the scores, and the references still hold.
      expect(await db.selectFrom('scores').select('scorer_id').orderBy('scorer_id').execute()).toEqual([{ scorer_id: first.id }, { scorer_id: second.id }]);
      await db.insertInto('scorers').values(scorer('capped')).execute();
      await expect(db.insertInto('scores').values(score(999_999)).execute()).rejects.toThrow();
      await db.deleteFrom('scorers').where('id', '=', first.id).execute();
      expect(await db.selectFrom('scores').select('scorer_id').execute()).toEqual([{ scorer_id: second.id }]);
    } finally {
      await database.close();
    }
  });
});
