import { type Kysely, type Migration, Migrator, type MigrationResult, sql } from 'kysely';
import type { Database } from './connection.js';
import { allMigrations } from './migrations/index.js';
import type { MigrationProgress, StepMigration } from './online-steps.js';

export interface MigrateOptions {
  /** Hears each step as it starts and ends, and a long step's own progress lines. */
  progress?: MigrationProgress;
  /** The migration list (tests); every shipped migration by default. */
  migrations?: Record<string, Migration>;
}

const isOutside = (migration: Migration | undefined) => (migration as StepMigration | undefined)?.outsideTransaction === true;

/**
 * The pool's statement timeout (DATABASE_QUERY_TIMEOUT_MS) bounds requests, not schema changes: a
 * backfill or an index build on a large table may take minutes. Inside the migration transaction
 * SET LOCAL lifts the bound for it alone; a step outside it lifts it for its connection and
 * restores the connection's own value after. A step outside a transaction, or one that took a
 * second or more, names itself to `progress`.
 */
function prepared(migrations: Record<string, Migration>, dialect: Database['dialect'], progress: MigrationProgress): Record<string, Migration> {
  return Object.fromEntries(
    Object.entries(migrations).map(([name, migration]) => [
      name,
      {
        ...migration,
        async up(db: Kysely<any>) {
          const started = Date.now();
          // Quick steps stay quiet: a fresh database applies every migration in well under a second.
          if (isOutside(migration)) progress(`${name}: applying outside a transaction`);
          const say = (line: string) => progress(`${name}: ${line}`);
          if (dialect === 'postgres') await sql.raw(isOutside(migration) ? 'set statement_timeout = 0' : 'set local statement_timeout = 0').execute(db);
          try {
            await (migration as StepMigration).up(db, say);
          } finally {
            if (dialect === 'postgres' && isOutside(migration)) await sql`reset statement_timeout`.execute(db);
          }
          const seconds = (Date.now() - started) / 1000;
          if (isOutside(migration) || seconds >= 1) progress(`${name}: applied in ${seconds.toFixed(1)} s`);
        },
      },
    ]),
  );
}

async function migratorFor(database: Database, migrations: Record<string, Migration>, disableTransactions = false): Promise<Migrator> {
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
    disableTransactions,
  });
}

/**
 * Applies every pending migration; returns the names applied. Consecutive ordinary migrations run
 * in one transaction, as one change; a migration marked `outsideTransaction` (online-steps.ts) runs
 * alone between them.
 */
export async function migrateToLatest(database: Database, options: MigrateOptions = {}): Promise<string[]> {
  const migrations = prepared(options.migrations ?? allMigrations(database.dialect), database.dialect, options.progress ?? (() => {}));
  const applied: string[] = [];
  for (;;) {
    const pending = await pendingOf(database, migrations);
    if (pending.length === 0) return applied;
    const outside = isOutside(migrationsOf(options, database)[pending[0]!]);
    // The run: this step alone when it is outside a transaction, else up to the next such step.
    let last = 0;
    if (!outside) while (last + 1 < pending.length && !isOutside(migrationsOf(options, database)[pending[last + 1]!])) last += 1;
    const migrator = await migratorFor(database, migrations, outside && database.dialect === 'postgres');
    const { error, results } = await migrator.migrateTo(pending[last]!);
    if (error) {
      const failed = results?.find((r: MigrationResult) => r.status === 'Error');
      throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`, { cause: error });
    }
    applied.push(...(results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName));
  }
}

function migrationsOf(options: MigrateOptions, database: Database): Record<string, Migration> {
  return options.migrations ?? allMigrations(database.dialect);
}

async function pendingOf(database: Database, migrations: Record<string, Migration>): Promise<string[]> {
  const known = await (await migratorFor(database, migrations)).getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Names of migrations not yet applied (empty when the schema is current). */
export async function pendingMigrations(database: Database): Promise<string[]> {
  return pendingOf(database, allMigrations(database.dialect));
}
