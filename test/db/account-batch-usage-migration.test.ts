import { type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, databaseKinds, migrateUpTo, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('0027-account-batch-usage on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('sums each account\'s daily usage from its keys and its portal session, and leaves operator batches out', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0023-model-scores');
      const db = database.db as unknown as Kysely<any>;
      const accountIds: number[] = [];
      for (const name of ['a', 'b']) {
        accountIds.push(Number((await db.insertInto('accounts').values({ name, created_at: 1 }).returning('id').executeTakeFirstOrThrow()).id));
      }
      const [a, b] = accountIds as [number, number];
      const keyIds: number[] = [];
      for (const [prefix, accountId] of [['aaaaaaaa', a], ['bbbbbbbb', a], ['cccccccc', b]] as const) {
        const row = await db
          .insertInto('api_keys')
          .values({ account_id: accountId, prefix, key_hash: prefix.repeat(8), name: prefix, tier: 1, can_submit: 1, can_read: 1, can_create_scorers: 1, can_read_history: 0, revoked_at: null, created_at: 1 })
          .returning('id')
          .executeTakeFirstOrThrow();
        keyIds.push(Number(row.id));
      }
      const [a1, a2, b1] = keyIds as [number, number, number];
      await db
        .insertInto('batch_usage')
        .values([
          { key_id: a1, day: '2025-01-01', addresses: 4 },
          { key_id: a2, day: '2025-01-01', addresses: 5 },
          { key_id: -a, day: '2025-01-01', addresses: 1 },
          { key_id: a1, day: '2025-01-02', addresses: 7 },
          { key_id: b1, day: '2025-01-01', addresses: 3 },
          { key_id: 0, day: '2025-01-01', addresses: 1000 },
        ])
        .execute();

      expect(await migrateToLatest(database)).toContain('0027-account-batch-usage');
      const rows = await database.db.selectFrom('batch_usage').selectAll().orderBy('account_id').orderBy('day').execute();
      expect(rows.map((row) => [Number(row.account_id), row.day, Number(row.addresses)])).toEqual([
        [a, '2025-01-01', 10],
        [a, '2025-01-02', 7],
        [b, '2025-01-01', 3],
      ]);
    } finally {
      await database.close();
    }
  });
});
