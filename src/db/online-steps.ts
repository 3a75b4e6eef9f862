import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from './dialect.js';

/** A migration's handle: migrations see the schema as it was when they shipped, not today's table types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Kysely's own Migration.up
export type SchemaDb = Kysely<any>;

/** Where a long migration step says how far it is (`stampgate migrate` prints it). */
export type MigrationProgress = (line: string) => void;

/**
 * A migration that may run outside the migration transaction. On PostgreSQL an index built inside
 * a transaction (plain CREATE INDEX) blocks every write to its table until the transaction ends,
 * and CREATE INDEX CONCURRENTLY, which does not, refuses to run inside one; a backfill done in one
 * statement holds its row locks until the end. Such a step runs alone, outside any transaction,
 * and must be safe to run again after a crash (IF NOT EXISTS, idempotent updates): a step that
 * failed halfway is not rolled back.
 */
export interface StepMigration extends Migration {
  outsideTransaction?: boolean;
  up(db: SchemaDb, progress?: MigrationProgress): Promise<void>;
}

/** An index built without blocking writes on PostgreSQL (CONCURRENTLY; for a migration outside the transaction). */
export async function createIndexOnline(
  db: SchemaDb,
  dialect: DialectName,
  index: { name: string; table: string; columns: string[]; where?: string },
  progress: MigrationProgress = () => {},
): Promise<void> {
  const columns = sql.join(index.columns.map((c) => sql.ref(c)));
  const where = index.where ? sql` where ${sql.raw(index.where)}` : sql``;
  const started = Date.now();
  progress(`building index ${index.name} on ${index.table}`);
  if (dialect === 'postgres') {
    // A crash during a concurrent build leaves an INVALID index of that name: dropped first, built again.
    const invalid = await sql<{ n: number }>`
      select count(*)::int as n from pg_index i join pg_class c on c.oid = i.indexrelid
      where c.relname = ${index.name} and not i.indisvalid and c.relnamespace = current_schema()::regnamespace`.execute(db);
    if ((invalid.rows[0]?.n ?? 0) > 0) await sql`drop index concurrently if exists ${sql.ref(index.name)}`.execute(db);
    await sql`create index concurrently if not exists ${sql.ref(index.name)} on ${sql.table(index.table)} (${columns})${where}`.execute(db);
  } else {
    await sql`create index if not exists ${sql.ref(index.name)} on ${sql.table(index.table)} (${columns})${where}`.execute(db);
  }
  progress(`built index ${index.name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Rewrites a big table in chunks of `chunk` rows by `id`, each its own statement (outside the
 * migration transaction each commits at once), so that no row lock is held for longer than one
 * chunk takes. `set` and `where` are SQL text; the rows are those with `where` true, the update
 * must make it false (then a rerun resumes where a crash stopped).
 */
export async function backfillInChunks(
  db: SchemaDb,
  step: { table: string; set: string; where: string; chunk?: number },
  progress: MigrationProgress = () => {},
): Promise<number> {
  const chunk = step.chunk ?? 5000;
  const bounds = await sql<{ low: number | null; high: number | null }>`select min(id) as low, max(id) as high from ${sql.table(step.table)}`.execute(db);
  const low = Number(bounds.rows[0]?.low ?? 0);
  const high = Number(bounds.rows[0]?.high ?? -1);
  let updated = 0;
  let reported = Date.now();
  for (let from = low; from <= high; from += chunk) {
    const result = await sql`update ${sql.table(step.table)} set ${sql.raw(step.set)} where id >= ${from} and id < ${from + chunk} and (${sql.raw(step.where)})`.execute(db);
    updated += Number(result.numAffectedRows ?? 0);
    if (Date.now() - reported >= 2000 || from + chunk > high) {
      reported = Date.now();
      progress(`${step.table}: ${updated} rows rewritten, up to id ${Math.min(high, from + chunk - 1)} of ${high}`);
    }
  }
  return updated;
}
