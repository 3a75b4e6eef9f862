import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, pendingMigrations } from '../../src/db/migrate.js';
import { allMigrations } from '../../src/db/migrations/index.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('migrations on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('applies every migration once and then has nothing pending', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      expect(await pendingMigrations(database)).toEqual(Object.keys(allMigrations(kind)));
      expect(await migrateToLatest(database)).toEqual(Object.keys(allMigrations(kind)));
      expect(await migrateToLatest(database)).toEqual([]);
      expect(await pendingMigrations(database)).toEqual([]);
      const tables = await database.db.introspection.getTables();
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['accounts', 'scorers', 'api_keys', 'nonces']));
    } finally {
      await database.close();
    }
  });
});
