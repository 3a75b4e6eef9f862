import { type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { accountsRepository } from '../../src/scoring/accounts/accounts.repository.js';
import { apiKeysRepository } from '../../src/scoring/accounts/api-keys.repository.js';
import { apiKeyService } from '../../src/scoring/accounts/api-keys.service.js';
import { createTestDatabase, databaseKinds, migrateUpTo, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('0014-key-permissions on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('keeps what existing keys could do, turns create_scorers on and leaves historical_endpoint off', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0012-scorer-settings');
      const db = database.db as unknown as Kysely<any>;
      const account = await db.insertInto('accounts').values({ name: 'old', created_at: 1 }).returning('id').executeTakeFirstOrThrow();
      const key = (prefix: string, canSubmit: number, canRead: number) => ({
        account_id: account.id,
        prefix,
        key_hash: prefix.repeat(8),
        name: prefix,
        tier: 1,
        can_submit: canSubmit,
        can_read: canRead,
        revoked_at: null,
        created_at: 1,
      });
      await db.insertInto('api_keys').values([key('aaaaaaaa', 1, 1), key('bbbbbbbb', 1, 0), key('cccccccc', 0, 1)]).execute();

      expect(await migrateToLatest(database)).toContain('0014-key-permissions');
      const keys = apiKeyService(apiKeysRepository(database), accountsRepository(database.db));
      expect((await keys.list()).map((k) => [k.prefix, k.permissions])).toEqual([
        ['aaaaaaaa', ['submit_passports', 'read_scores', 'create_scorers']],
        ['bbbbbbbb', ['submit_passports', 'create_scorers']],
        ['cccccccc', ['read_scores', 'create_scorers']],
      ]);
    } finally {
      await database.close();
    }
  });
});
