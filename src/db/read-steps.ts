import type SqliteDatabase from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { DatabaseAvailability } from './availability.js';
import type { Db } from './tables/index.js';

/**
 * A read of several statements, written once for both dialects as a generator: it yields each
 * compiled statement, gets that statement's rows back, and returns the answer. How the statements
 * run is the runner's business (see `kyselyReads` and `sqliteReads`).
 */
export type ReadSteps<T> = Generator<CompiledQuery, T, unknown[]>;

/** Runs the statements of a read, in order, and answers what the read returns. */
export type ReadRunner = <T>(steps: ReadSteps<T>) => Promise<T>;

/** One step: the rows of `query`, typed as its result. */
export function* rowsOf<R>(query: CompiledQuery<R>): Generator<CompiledQuery, R[], unknown[]> {
  return (yield query) as R[];
}

/** Each statement through Kysely, one after another (PostgreSQL: a round trip and a snapshot each, as any query). */
export function kyselyReads(db: Db): ReadRunner {
  return async (steps) => {
    try {
      let step = steps.next();
      while (!step.done) step = steps.next((await db.executeQuery(step.value)).rows);
      return step.value;
    } catch (error) {
      // Runs the read's own `finally` blocks, if it has any.
      steps.return(undefined as never);
      throw error;
    }
  };
}

/**
 * SQLite: the statements run synchronously, in one read transaction, while the read holds the
 * connection as a Kysely query does (no other query, nor another's transaction, can come between
 * them). So they read one snapshot (a bounty page and its count agree), and skip Kysely's cost per
 * statement (its connection lock, promises and result objects; docs/decisions.md has the figures).
 * Reads only: a statement that may write (`RETURNING` ones included) is refused. Never call it while
 * holding the connection (inside `writeTransaction` or `db.connection()`): it would wait for itself.
 */
export function sqliteReads(
  sqlite: SqliteDatabase.Database,
  db: Db,
  statementOf: (sql: string) => SqliteDatabase.Statement,
  availability: DatabaseAvailability,
): ReadRunner {
  const begin = sqlite.prepare('begin');
  const commit = sqlite.prepare('commit');
  return (steps) =>
    db.connection().execute(async () => {
      // Holding the connection, no transaction of ours can be open: one is a transaction leaked on the raw handle.
      if (sqlite.inTransaction) throw new Error('sqliteReads: a transaction was left open on the SQLite connection');
      begin.run();
      let failed = false;
      try {
        let step = steps.next();
        while (!step.done) {
          const statement = statementOf(step.value.sql);
          if (!statement.reader || !statement.readonly) throw new Error(`sqliteReads runs reads only: ${step.value.sql}`);
          step = steps.next(statement.all(step.value.parameters as unknown[]));
        }
        availability.succeeded();
        return step.value;
      } catch (error) {
        failed = true;
        availability.observe(error);
        steps.return(undefined as never);
        throw error;
      } finally {
        try {
          if (sqlite.inTransaction) commit.run();
        } catch (error) {
          // The read's own error is the one to report; a failed commit of a successful read is.
          // eslint-disable-next-line no-unsafe-finally -- the commit is part of the read: its error replaces the answer
          if (!failed) throw error;
        }
      }
    });
}
