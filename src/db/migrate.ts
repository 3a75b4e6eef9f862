import { Migrator, type MigrationResult } from 'kysely';
import type { Database } from './connection.js';
import { allMigrations } from './migrations/index.js';

function migratorFor(database: Database): Migrator {
  const migrations = allMigrations(database.dialect);
  return new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const { error, results } = await migratorFor(database).migrateToLatest();
  if (error) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of migrations not yet applied (empty when the schema is current). */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const known = await migratorFor(database).getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
