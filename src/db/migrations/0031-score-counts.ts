import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

// The shapes of online-steps.ts, restated: a shipped migration imports nothing that may change.
type SchemaDb = Kysely<any>;
type MigrationProgress = (line: string) => void;
interface StepMigration extends Migration {
  outsideTransaction: true;
  up(db: SchemaDb, progress?: MigrationProgress): Promise<void>;
}

/** An hour of last_score_timestamp: buckets are `last_score_timestamp / 3 600 000` (whole division). */
export const SCORE_COUNT_BUCKET_MS = 3_600_000;
/** PostgreSQL counter rows per bucket: a connection writes one of them (its backend pid modulo this). */
const SHARDS = 8;

/**
 * The score list's `count` (rows of a scorer scored after a time) read from a counted summary
 * instead of counting the index range after that time, which grew with the table: a walk of every
 * score in pages was quadratic. `score_counts` holds, per scorer and hour of
 * last_score_timestamp, how many scores are in it; triggers on `scores` keep it exact on insert,
 * re-scoring (the timestamp moves to another hour) and delete (an account's or scorer's deletion
 * cascades), whatever writes the rows. The list counts the one partial hour from the index and sums
 * the later hours here.
 *
 * On PostgreSQL each bucket is split over SHARDS counter rows, the writing connection picking its
 * own (backend pid modulo SHARDS), so that concurrent scorings, which all land in the current
 * hour, do not queue on one row, and one connection's transaction only ever updates one row per
 * bucket (no lock-order deadlock between two connections). Triggers there are per statement with
 * transition tables: a multi-row write (a batch, a bulk load) updates each bucket once, in key
 * order. SQLite has one writer and per-row triggers; its shard is always 0.
 *
 * The backfill runs outside a transaction on PostgreSQL: the triggers start counting first, then
 * each scorer is rebuilt in its own transaction holding a SHARE lock on `scores` (writes wait for
 * one scorer's index-only count, reads go on) and is then marked in `score_counts_ready`; the list
 * uses the summary only for ready scorers. A scorer created later is ready at once (a trigger on
 * `scorers`): it has no scores yet. Rerunning after a crash rebuilds what was not marked.
 */
export function scoreCounts(dialect: DialectName): StepMigration {
  return {
    outsideTransaction: true,
    async up(db: SchemaDb, progress: MigrationProgress = () => {}) {
      await sql`
        create table if not exists score_counts (
          scorer_id integer not null, bucket bigint not null, shard integer not null, n bigint not null,
          constraint score_counts_pk primary key (scorer_id, bucket, shard))`.execute(db);
      await sql`create table if not exists score_counts_ready (scorer_id integer not null primary key)`.execute(db);
      if (dialect === 'postgres') await postgresTriggers(db);
      else await sqliteTriggers(db);

      const scorers = (await sql<{ id: number }>`select id from scorers where id not in (select scorer_id from score_counts_ready) order by id`.execute(db)).rows.map((r) => Number(r.id));
      let reported = Date.now();
      for (const [index, scorerId] of scorers.entries()) {
        if (dialect === 'postgres') {
          await db.transaction().execute(async (trx) => {
            await sql`set local statement_timeout = 0`.execute(trx);
            await sql`lock table scores in share mode`.execute(trx);
            await rebuild(trx, scorerId);
          });
        } else {
          // SQLite runs the migration in one transaction and has one writer: nothing moves meanwhile.
          await rebuild(db, scorerId);
        }
        if (Date.now() - reported >= 2000 || index === scorers.length - 1) {
          reported = Date.now();
          progress(`score_counts: ${index + 1} of ${scorers.length} scorers counted`);
        }
      }
    },
  };
}

async function rebuild(db: SchemaDb, scorerId: number): Promise<void> {
  await sql`delete from score_counts where scorer_id = ${scorerId}`.execute(db);
  await sql`
    insert into score_counts (scorer_id, bucket, shard, n)
    select scorer_id, last_score_timestamp / ${sql.lit(SCORE_COUNT_BUCKET_MS)}, 0, count(*) from scores
    where scorer_id = ${scorerId} group by scorer_id, last_score_timestamp / ${sql.lit(SCORE_COUNT_BUCKET_MS)}`.execute(db);
  await sql`insert into score_counts_ready (scorer_id) values (${scorerId}) on conflict (scorer_id) do nothing`.execute(db);
}

async function postgresTriggers(db: SchemaDb): Promise<void> {
  const bucket = (alias: string) => sql.raw(`${alias}.last_score_timestamp / ${SCORE_COUNT_BUCKET_MS}`);
  // The deltas of one statement, a row per bucket, in key order, written to this connection's shard.
  const apply = (deltas: ReturnType<typeof sql>) => sql`
    insert into score_counts as c (scorer_id, bucket, shard, n)
    select scorer_id, bucket, pg_backend_pid() % ${sql.lit(SHARDS)}, d from (${deltas}) as deltas
    where d <> 0 order by scorer_id, bucket
    on conflict (scorer_id, bucket, shard) do update set n = c.n + excluded.n`;
  const bodies = {
    insert: apply(sql`select scorer_id, ${bucket('r')} as bucket, count(*) as d from new_rows r group by 1, 2`),
    delete: apply(sql`select scorer_id, ${bucket('r')} as bucket, -count(*) as d from old_rows r group by 1, 2`),
    update: apply(sql`
      select scorer_id, bucket, sum(d) as d from (
        select scorer_id, ${bucket('o')} as bucket, -1 as d from old_rows o
        union all select scorer_id, ${bucket('r')} as bucket, 1 as d from new_rows r) as moved
      group by 1, 2`),
  };
  const transitions = { insert: 'new table as new_rows', delete: 'old table as old_rows', update: 'old table as old_rows new table as new_rows' };
  for (const op of ['insert', 'delete', 'update'] as const) {
    const fn = sql.raw(`score_counts_on_${op}`);
    await sql`create or replace function ${fn}() returns trigger language plpgsql as $$
      begin
        ${bodies[op]};
        return null;
      end $$`.execute(db);
    await sql`drop trigger if exists ${fn} on scores`.execute(db);
    await sql`create trigger ${fn} after ${sql.raw(op)} on scores referencing ${sql.raw(transitions[op])} for each statement execute function ${fn}()`.execute(db);
  }
  await sql`create or replace function score_counts_new_scorer() returns trigger language plpgsql as $$
    begin
      insert into score_counts_ready (scorer_id) values (new.id) on conflict (scorer_id) do nothing;
      return null;
    end $$`.execute(db);
  await sql`drop trigger if exists score_counts_new_scorer on scorers`.execute(db);
  await sql`create trigger score_counts_new_scorer after insert on scorers for each row execute function score_counts_new_scorer()`.execute(db);
}

async function sqliteTriggers(db: SchemaDb): Promise<void> {
  // A stored time is an integer; the cast keeps the bucket a whole division should one be a REAL.
  const bucket = (alias: string) => sql.raw(`cast(${alias}.last_score_timestamp as integer) / ${SCORE_COUNT_BUCKET_MS}`);
  const add = (alias: string, delta: number) => sql`
    insert into score_counts (scorer_id, bucket, shard, n) values (${sql.raw(alias)}.scorer_id, ${bucket(alias)}, 0, ${sql.lit(delta)})
    on conflict (scorer_id, bucket, shard) do update set n = n + ${sql.lit(delta)};`;
  await sql`create trigger if not exists score_counts_on_insert after insert on scores begin ${add('new', 1)} end`.execute(db);
  await sql`create trigger if not exists score_counts_on_delete after delete on scores begin ${add('old', -1)} end`.execute(db);
  await sql`
    create trigger if not exists score_counts_on_update after update of scorer_id, last_score_timestamp on scores
    when new.scorer_id <> old.scorer_id or ${bucket('new')} <> ${bucket('old')}
    begin ${add('old', -1)} ${add('new', 1)} end`.execute(db);
  await sql`
    create trigger if not exists score_counts_new_scorer after insert on scorers
    begin insert into score_counts_ready (scorer_id) values (new.id) on conflict (scorer_id) do nothing; end`.execute(db);
}
