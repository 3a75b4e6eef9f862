import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Expression, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';

/**
 * The one place where SQLite and PostgreSQL differ. Everything else (schema,
 * queries) is written once against Kysely and runs on both.
 */
export type DialectName = 'sqlite' | 'postgres';

/** Adds an auto-incrementing integer primary key named `id`. */
export function withIdColumn<T extends string>(
  dialect: DialectName,
  table: CreateTableBuilder<T, never>,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}

/** Epoch-millisecond columns: `bigint` on PostgreSQL (parsed back to number), `integer` on SQLite. */
export const timeColumnType = 'bigint' as const;

/**
 * Row locking for queue claims. PostgreSQL skips rows other transactions have
 * locked, so concurrent workers never wait on or take the same job; SQLite has
 * one writer at a time and needs nothing.
 */
export function lockSkippingLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(dialect: DialectName, query: Q): Q {
  return dialect === 'postgres' ? query.forUpdate().skipLocked() : query;
}

/**
 * Text column type whose ordering is by code point on both databases: SQLite's
 * default BINARY collation does this already; PostgreSQL's default collation
 * follows the locale (case and punctuation folded), so it is pinned to "C".
 * Used for every text column a list can be ordered by, and for addresses.
 */
export function orderedTextType(dialect: DialectName): 'text' | RawBuilder<unknown> {
  return dialect === 'postgres' ? sql`text collate "C"` : 'text';
}

/** Escapes `%`, `_` and `\` for a LIKE pattern used with `escape '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * `column` contains `text`, ignoring case: `ILIKE` on PostgreSQL; on SQLite `instr` of both sides
 * in lower case, which is what its LIKE does (ASCII case folding, `text` matched literally) but
 * not a LIKE: SQLite re-prepares a statement whose LIKE pattern is a bound parameter every time
 * the parameter is bound (in case the new pattern allows an index range), which cost more than
 * running the bounty list's walk and count.
 */
export function containsInsensitive(dialect: DialectName, column: Expression<unknown>, text: string): RawBuilder<SqlBool> {
  return dialect === 'postgres'
    ? sql<SqlBool>`${column} ilike ${`%${escapeLike(text)}%`} escape '\\'`
    : sql<SqlBool>`instr(lower(${column}), lower(${text})) > 0`;
}

/**
 * A LIMIT or OFFSET count. SQLite (3.47 on) plans with the value bound to a LIMIT parameter, so it
 * re-prepares the statement each time the parameter is bound; a literal (a validated integer) is
 * planned once per text. PostgreSQL keeps the parameter: one named prepared statement serves every page.
 */
export function rowCount(dialect: DialectName, count: number): number | RawBuilder<number> {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`not a row count: ${count}`);
  return dialect === 'sqlite' ? sql.lit(count) : count;
}

/**
 * `column` in a WHERE clause that must not pick the index: SQLite's planner
 * prefers an equality index (then sorts) over walking the ORDER BY index and
 * stopping at LIMIT, which is far slower for a list; the unary `+` makes the
 * column an expression there. PostgreSQL weighs the LIMIT itself and gets the
 * plain column.
 */
export function notIndexed(dialect: DialectName, column: string): RawBuilder<unknown> {
  return dialect === 'sqlite' ? sql`+${sql.ref(column)}` : sql.ref(column);
}

/**
 * Takes a lock that lasts until the end of the current transaction, without waiting: true when it was
 * taken. PostgreSQL uses an advisory transaction lock on `key`; on SQLite a write transaction
 * (BEGIN IMMEDIATE) already excludes every other writer, so it is always true there.
 */
export async function tryTransactionLock(dialect: DialectName, trx: Kysely<any>, key: number): Promise<boolean> {
  if (dialect !== 'postgres') return true;
  const result = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${key}) as locked`.execute(trx);
  return result.rows[0]?.locked === true;
}

/**
 * Like tryTransactionLock, for one member (`id`) of a family of locks (`space`): true when this transaction now
 * holds it, false when another one does; never waits. SQLite (one writer at a time) always holds it.
 */
export async function tryTransactionLockOf(dialect: DialectName, trx: Kysely<any>, space: number, id: number): Promise<boolean> {
  if (dialect !== 'postgres') return true;
  const result = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${space}::int, ${id}::int) as locked`.execute(trx);
  return result.rows[0]?.locked === true;
}

/** First key of the score event log's advisory locks (the second is the scorer id). */
const SCORE_EVENT_LOCK_SPACE = 0x5e0e;

/**
 * Serialises the appends to one scorer's score event log until the transaction ends, so that its
 * event ids commit in id order: a reader paging by `after=<event_id>` could otherwise pass a lower
 * id that commits later. PostgreSQL takes a transaction-scoped advisory lock; SQLite has one
 * writer at a time and needs nothing.
 */
export async function lockScoreEventLog(dialect: DialectName, db: Kysely<any>, scorerId: number): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${SCORE_EVENT_LOCK_SPACE}::int, ${scorerId}::int)`.execute(db);
}

/**
 * `column` is one of `values`, in one parameter whatever their number: PostgreSQL binds the
 * array (`= any`), SQLite reads it as a JSON array (`json_each`). Both plan it as one index
 * lookup per value, and a statement's text (and compiled plan) does not depend on the count.
 */
export function isOneOf(dialect: DialectName, column: string, values: readonly string[]): RawBuilder<SqlBool> {
  return dialect === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} = any(${[...values]}::text[])`
    : sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(values)}))`;
}

/**
 * A scorer id that PostgreSQL plans as an average scorer, not as this one (`(select $1)`, whose
 * value the planner does not see). It estimates `scorer_id = 7` from the statistics of scorer 7,
 * and a scorer created since the last ANALYZE (a new scorer's first batch) is estimated at no
 * rows: for `scorer_id = 7 and address = any(…)` it then walks every row of the scorer in another
 * index and filters, at each read, a cost that grows with the scorer. As an average scorer, the
 * index bounded by both columns is the cheaper one. SQLite keeps no statistics per value: the id as is.
 */
export function scorerIdForPlanner(dialect: DialectName, scorerId: number): RawBuilder<number> | number {
  return dialect === 'postgres' ? sql<number>`(select ${scorerId}::integer)` : scorerId;
}
