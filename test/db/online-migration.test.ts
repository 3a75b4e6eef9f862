import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { allMigrations } from '../../src/db/migrations/index.js';
import { backfillInChunks, createIndexOnline, type StepMigration } from '../../src/db/online-steps.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

const ROWS = 40;

describe.each(databaseKinds)('migration steps outside the transaction on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  async function seededDatabase() {
    test = await createTestDatabase(kind);
    const database = test.open();
    await migrateToLatest(database);
    const rows = Array.from({ length: ROWS }, (_, i) => ({
      address: `0x${String(i).padStart(40, '0')}`,
      provider: 'Discord',
      issuer: 'did:ethr:0x0',
      nullifiers: '["n"]',
      digest: `d${i}`,
      credential: '{}',
      issuance_date: 1,
      expiration_date: 2,
      created_at: 3,
      updated_at: 3,
    }));
    await database.db.insertInto('stamps').values(rows).execute();
    return database;
  }

  const onlineStep: StepMigration = {
    outsideTransaction: true,
    async up(db: Kysely<any>, progress) {
      await createIndexOnline(db, kind, { name: 'stamps_updated_at_test_idx', table: 'stamps', columns: ['updated_at'] }, progress);
      await backfillInChunks(db, { table: 'stamps', set: 'updated_at = 4', where: 'updated_at <> 4', chunk: 7 }, progress);
    },
  };

  it('builds an index concurrently and backfills in chunks, printing the progress of the step', async () => {
    const database = await seededDatabase();
    try {
      const lines: string[] = [];
      const migrations = { ...allMigrations(kind), '9000-online': onlineStep };
      // On PostgreSQL CREATE INDEX CONCURRENTLY fails inside a transaction block: this runs only outside one.
      expect(await migrateToLatest(database, { migrations, progress: (line) => lines.push(line) })).toEqual(['9000-online']);
      const updated = await database.db.selectFrom('stamps').select((eb) => eb.fn.countAll<number>().as('n')).where('updated_at', '=', 4).executeTakeFirstOrThrow();
      expect(Number(updated.n)).toBe(ROWS);
      const index =
        kind === 'postgres'
          ? await sql<{ valid: boolean }>`select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = 'stamps_updated_at_test_idx'`.execute(database.db)
          : await sql<{ valid: number }>`select 1 as valid from sqlite_master where type = 'index' and name = 'stamps_updated_at_test_idx'`.execute(database.db);
      expect(index.rows.map((r) => Boolean(r.valid))).toEqual([true]);
      expect(lines[0]).toBe('9000-online: applying outside a transaction');
      expect(lines).toContain('9000-online: building index stamps_updated_at_test_idx on stamps');
      expect(lines.filter((line) => / rows rewritten, up to id \d+ of \d+$/.test(line)).at(-1)).toMatch(new RegExp(`stamps: ${ROWS} rows rewritten`));
      expect(lines.at(-1)).toMatch(/^9000-online: applied in \d+\.\d s$/);
      // Idempotent: nothing is pending, and running the step again changes nothing.
      expect(await migrateToLatest(database, { migrations })).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('keeps the migrations around a step outside the transaction in their own transactions', async () => {
    const database = await seededDatabase();
    try {
      const failing: StepMigration = {
        async up(db: Kysely<any>) {
          await db.schema.createTable('half_done').addColumn('id', 'integer').execute();
          throw new Error('broken step');
        },
      };
      const migrations = { ...allMigrations(kind), '9000-online': onlineStep, '9001-broken': failing };
      await expect(migrateToLatest(database, { migrations })).rejects.toThrow('Migration 9001-broken failed: broken step');
      // The step outside stays applied; the failed ordinary one left nothing behind on PostgreSQL (transactional DDL).
      const executed = await sql<{ name: string }>`select name from kysely_migration where name like '9%'`.execute(database.db);
      expect(executed.rows.map((r) => r.name)).toEqual(['9000-online']);
      if (kind === 'postgres') {
        const tables = await database.db.introspection.getTables();
        expect(tables.map((t) => t.name)).not.toContain('half_done');
      }
    } finally {
      await database.close();
    }
  });
});
