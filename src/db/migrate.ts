import { type Kysely, type Migration, Migrator, type MigrationResult, sql } from 'kysely';
import type { Database } from './connection.js';
import { allMigrations } from './migrations/index.js';

/**
 * The pool's statement timeout (DATABASE_QUERY_TIMEOUT_MS) bounds requests, not schema changes: a
 * backfill or an index build on a large table may take minutes. PostgreSQL runs each migration in a
 * transaction, so SET LOCAL lifts the bound for that migration only.
 */
function withoutStatementTimeout(migrations: Record<string, Migration>, dialect: Database['dialect']): Record<string, Migration> {
  if (dialect !== 'postgres') return migrations;
  return Object.fromEntries(
    Object.entries(migrations).map(([name, migration]) => [
      name,
      {
        ...migration,
        async up(db: Kysely<any>) {
          await sql`set local statement_timeout = 0`.execute(db);
          await migration.up(db);
        },
      },
    ]),
  );
}

async function migratorFor(database: Database): Promise<Migrator> {
  const migrations = withoutStatementTimeout(allMigrations(database.dialect), database.dialect);
  // On PostgreSQL the bookkeeping tables live in the connection's own schema, so that
  // databases holding several Stampgate schemas (search_path per deployment) never mix them up.
  const schema =
    database.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema
      : undefined;
  return new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const { error, results } = await (await migratorFor(database)).migrateToLatest();
  if (error) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of migrations not yet applied (empty when the schema is current). */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const known = await (await migratorFor(database)).getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
