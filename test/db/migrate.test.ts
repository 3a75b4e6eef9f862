import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, pendingMigrations } from '../../src/db/migrate.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('migrations on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('applies every migration once and then has nothing pending', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      expect(await pendingMigrations(database)).toEqual(['0001-foundation', '0002-scoring']);
      expect(await migrateToLatest(database)).toEqual(['0001-foundation', '0002-scoring']);
      expect(await migrateToLatest(database)).toEqual([]);
      expect(await pendingMigrations(database)).toEqual([]);
      const tables = await database.db.introspection.getTables();
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['accounts', 'scorers', 'api_keys', 'nonces']));
    } finally {
      await database.close();
    }
  });
});
