import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  type Compilable,
  CompiledQuery,
  Kysely,
  PostgresDialect,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type QueryResult,
  SqliteDialect,
} from 'kysely';
import pg from 'pg';
import { type AvailabilityLog, DatabaseAvailability } from './availability.js';
import type { DialectName } from './dialect.js';
import { kyselyReads, type ReadRunner, sqliteReads } from './read-steps.js';
import { SqliteCheckpoints } from './sqlite-checkpoints.js';
import { SqliteWriteWatch } from './sqlite-watch.js';
import type { Tables } from './tables/index.js';

import type { Db } from './tables/index.js';

export type { Db };

export interface Database {
  db: Db;
  dialect: DialectName;
  /** Outage tracking: every query reports here, so the first success after an outage ends it. */
  availability: DatabaseAvailability;
  /** The URL it was opened with (a LISTEN connection opens its own client from it). */
  url: string;
  close(): Promise<void>;
  /** Runs a read of several statements (see read-steps.ts): on SQLite in one snapshot, without Kysely's cost per statement. */
  reads: ReadRunner;
  /**
   * SQLite only: a number that changes whenever another connection (another process) has
   * committed to the database file since the last call; this connection's own commits leave it
   * unchanged. Null when that cannot be told (see SqliteWriteWatch).
   */
  writesElsewhere?: () => number | null;
}

export interface OpenOptions {
  /** PostgreSQL pool size; SQLite always uses one connection. */
  poolSize?: number;
  /** PostgreSQL: run parameterised statements as named prepared statements (default true). */
  preparedStatements?: boolean;
  /** PostgreSQL schema to use (tests isolate themselves in throw-away schemas). */
  searchPath?: string;
  /** How long opening a connection, or waiting for a pooled one, may take (DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** How long a statement may take (DATABASE_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
  /** Where the outage warning and the end-of-outage line go. */
  log?: AvailabilityLog;
  /** SQLite: checkpoint the WAL on a thread of its own instead of in committing writes (long-running processes; see SqliteCheckpoints). */
  backgroundCheckpoints?: boolean;
}

const defaultConnectTimeoutMs = 1000;
const defaultQueryTimeoutMs = 5000;

/** Kysely's query log, used to notice outages and their end on every query of either dialect. */
function observeQueries(availability: DatabaseAvailability) {
  return (event: { level: 'query' | 'error'; error?: unknown; queryDurationMillis: number }) => {
    if (event.level === 'query') availability.succeeded(event.queryDurationMillis);
    else availability.observe(event.error);
  };
}

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  if (url.startsWith('sqlite:')) return openSqlite(url, options);
  throw new Error(`Unsupported database URL: ${url}`);
}

function openPostgres(url: string, options: OpenOptions): Database {
  const types = {
    // int8 columns hold epoch milliseconds and ids, all far below 2^53.
    getTypeParser: ((oid: number, format?: string) =>
      oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const connectTimeoutMs = options.connectTimeoutMs ?? defaultConnectTimeoutMs;
  const queryTimeoutMs = options.queryTimeoutMs ?? defaultQueryTimeoutMs;
  // connectionTimeoutMillis bounds both opening a connection (the pool hands it to each client)
  // and waiting for a free one, so that no request waits longer than the connect timeout for a
  // connection, outage or exhausted pool alike.
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 6,
    types,
    connectionTimeoutMillis: connectTimeoutMs,
    // The server cancels a statement past the budget and the connection stays usable; the
    // client-side bound (a little later) covers a server that does not answer at all.
    statement_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1000,
    keepAlive: true,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  });
  // A connection can fail at any moment: idle in the pool (the pool's `error` event), or checked
  // out between two queries, where node-postgres emits `error` on the client with no listener of
  // the pool's own. Either would end the process as an unhandled 'error' event. The query that
  // uses such a client fails instead (the client is no longer queryable) and the pool discards it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const availability = new DatabaseAvailability(options.log);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: options.preparedStatements === false ? pool : withNamedStatements(pool) }), log: observeQueries(availability) });
  return { db, dialect: 'postgres', availability, url, close: () => db.destroy(), reads: kyselyReads(db) };
}

// Prepared statements gone wrong: a table changed under one ("cached plan must not change result
// type"), or the server session is not the one that prepared it (a transaction-mode pooler, or a
// DEALLOCATE): "does not exist", "already exists".
const statementFaults = new Set(['0A000', '26000', '42P05']);
// Statements with more values than this vary with list lengths (`in ($1, …, $n)`): naming each
// length would use the names up.
const mostNamedParameters = 16;
const transactionStart = /^\s*(begin|start\s+transaction)\b/i;
const transactionEnd = /^\s*(commit|rollback|end|abort)\b/i;
// What writeTransaction begins with (read write is the default: the text only tells its
// transactions apart from others, such as a migration's, whose statements stay unnamed).
const namedTransactionStart = 'start transaction read write';

/** A named statement failed for a reason that running it unnamed would not have (see statementFaults). */
function isPreparedStatementFault(error: unknown): boolean {
  return statementFaults.has((error as { code?: string } | null)?.code ?? '');
}

// Named statements that failed as such inside a write transaction (the text now runs unnamed):
// only these make writeTransaction run again, not the same codes from an unnamed statement.
const staleInTransaction = new WeakSet<object>();
// Each run again names one text fewer; a transaction names only a handful.
const mostTransactionRuns = 10;

/**
 * Parameterised statements run as named prepared statements: each connection parses and plans
 * one once, and then only binds values (the unnamed statements Kysely sends are parsed and
 * planned on every run). Named by SQL text, up to `capacity` texts per process, past which (and
 * for any text that once failed as a prepared statement) statements run unnamed. Inside a
 * transaction a failed statement aborts it, so it cannot be retried alone: only writeTransaction's
 * transactions name their statements (writeTransaction runs the whole transaction again after
 * such a failure); others, such as a migration's (which alters tables and then queries them), stay
 * unnamed. Statements without parameters stay on the simple protocol, which allows several
 * commands in one text.
 */
function withNamedStatements(pool: pg.Pool, capacity = 300): PostgresPool {
  const names = new Map<string, string | null>();
  let next = 0;
  const nameOf = (text: string): string | null => {
    let name = names.get(text);
    if (name === undefined) {
      name = names.size < capacity ? `stampgate_${(next += 1)}` : null;
      if (name !== null) names.set(text, name);
    }
    return name;
  };
  return {
    async connect() {
      const client = await pool.connect();
      let inTransaction = false;
      let namedInTransaction = false;
      // A connection whose prepared statements went wrong is closed when released, not reused.
      let discard = false;
      const query = async (text: string, values: readonly unknown[]) => {
        if (values.length === 0) {
          if (transactionStart.test(text)) {
            inTransaction = true;
            namedInTransaction = text === namedTransactionStart;
          } else if (transactionEnd.test(text)) inTransaction = namedInTransaction = false;
        }
        const named = values.length > 0 && values.length <= mostNamedParameters && (!inTransaction || namedInTransaction);
        const name = named ? nameOf(text) : null;
        if (name === null) return client.query(text, values as unknown[]);
        try {
          return await client.query({ name, text, values: values as unknown[] });
        } catch (error) {
          if (!isPreparedStatementFault(error)) throw error;
          names.set(text, null);
          discard = true;
          // Inside a transaction the failure aborted it: writeTransaction runs it again, unnamed.
          if (inTransaction) {
            if (error !== null && typeof error === 'object') staleInTransaction.add(error);
            throw error;
          }
          return client.query(text, values as unknown[]);
        }
      };
      return {
        query: ((textOrCursor: string | PostgresCursor<unknown>, values: readonly unknown[]) =>
          typeof textOrCursor === 'string' ? query(textOrCursor, values) : client.query(textOrCursor as never)) as unknown as PostgresPoolClient['query'],
        release: () => client.release(discard || undefined),
      };
    },
    end: () => pool.end(),
  };
}

function openSqlite(url: string, options: OpenOptions): Database {
  const file = url.slice('sqlite:'.length);
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // How long a write waits for another process's write lock before it fails (SQLITE_BUSY).
  sqlite.pragma(`busy_timeout = ${options.queryTimeoutMs ?? defaultQueryTimeoutMs}`);
  const availability = new DatabaseAvailability(options.log);
  const checkpoints = options.backgroundCheckpoints && file !== ':memory:' ? new SqliteCheckpoints(sqlite, file, availability.log) : null;
  const statementOf = statementCache(sqlite);
  const db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: { close: () => sqlite.close(), prepare: statementOf } }),
    log: observeQueries(availability),
  });
  const reads = sqliteReads(sqlite, db, statementOf, availability);
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  const readVersion = () => dataVersion.get() as number;
  // Made at the first look (the score cache's), so that CLI commands and tests watch nothing.
  let watch: SqliteWriteWatch | null = null;
  const writesElsewhere = file === ':memory:' ? () => 0 : () => (watch ??= new SqliteWriteWatch(file, readVersion)).generation();
  const close = async () => {
    watch?.close();
    await checkpoints?.stop();
    await db.destroy();
  };
  return { db, dialect: 'sqlite', availability, url, close, reads, writesElsewhere };
}

/**
 * Kysely's SQLite driver prepares every statement anew; preparing costs more
 * than running most of our queries, so statements are kept by SQL text.
 */
function statementCache(sqlite: SqliteDatabase.Database, capacity = 500): (sql: string) => SqliteDatabase.Statement {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return (sql) => {
    let statement = cache.get(sql);
    if (statement) {
      cache.delete(sql);
    } else {
      statement = sqlite.prepare(sql);
      if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
    }
    cache.set(sql, statement);
    return statement;
  };
}

const beginImmediate = CompiledQuery.raw('begin immediate');
const commit = CompiledQuery.raw('commit');
const rollback = CompiledQuery.raw('rollback');

/**
 * A transaction that writes. On SQLite it starts with `BEGIN IMMEDIATE`: a deferred
 * transaction that reads first and writes later fails at once with SQLITE_BUSY when
 * another process holds the write lock, whereas an immediate one waits for it
 * (busy_timeout). PostgreSQL runs a plain transaction whose statements are named prepared
 * statements, and runs it again when one of them went stale: `work` must leave nothing behind
 * outside the database until it returns.
 */
export async function writeTransaction<T>({ db, dialect }: Database, work: (trx: Db) => Promise<T>): Promise<T> {
  if (dialect === 'postgres') {
    // The access mode is PostgreSQL's default; its text is what marks the transaction (see namedTransactionStart).
    for (let run = 1; ; run++) {
      try {
        return await db.transaction().setAccessMode('read write').execute(work);
      } catch (error) {
        // A prepared statement went stale (another process migrated the table): nothing was
        // committed, and the statement that failed now runs unnamed. The next run may take another
        // connection of the pool, whose own statements of that table are stale too.
        if (!staleInTransaction.has(error as object) || run >= mostTransactionRuns) throw error;
      }
    }
  }
  return db.connection().execute(async (connection) => {
    await connection.executeQuery(beginImmediate);
    try {
      const result = await work(connection);
      await connection.executeQuery(commit);
      return result;
    } catch (error) {
      await connection.executeQuery(rollback);
      throw error;
    }
  });
}

/**
 * One write statement, atomic by itself: PostgreSQL runs it alone (no transaction and its two
 * more round trips), SQLite in an immediate transaction (a deferred one could fail at once with
 * SQLITE_BUSY, see writeTransaction).
 */
export async function writeStatement<T>(database: Database, work: (db: Db) => Promise<T>): Promise<T> {
  return database.dialect === 'postgres' ? work(database.db) : writeTransaction(database, work);
}

/**
 * A query built and compiled once, then run with fresh values: building and compiling a Kysely
 * query costs more CPU than SQLite needs to run a simple one, which matters on the hot paths
 * (the score read, the job queue). `build` is called once, with placeholders, and must hand each
 * of its arguments to the query as a value (never inspect them); each run puts its own values
 * where the placeholders went. The SQL text depends on the dialect, so make one per repository
 * (per database), never one per module; it runs on that database or any transaction of it.
 */
export function compiledOnce<P extends unknown[], R>(build: (db: Db, ...params: P) => Compilable<R>) {
  let template: { compiled: CompiledQuery<R>; slots: ({ param: number } | { value: unknown })[] } | null = null;
  return (db: Db, ...params: P): Promise<QueryResult<R>> => {
    if (!template) {
      const placeholders = params.map((_, index) => ({ placeholder: index }));
      const compiled = build(db, ...(placeholders as P)).compile();
      const slots = compiled.parameters.map((value) => {
        const index = placeholders.indexOf(value as { placeholder: number });
        return index >= 0 ? { param: index } : { value };
      });
      if (placeholders.some((_, index) => !slots.some((slot) => 'param' in slot && slot.param === index))) {
        throw new Error(`compiledOnce: a parameter of "${compiled.sql}" was not used as a value`);
      }
      template = { compiled, slots };
    }
    const { compiled, slots } = template;
    return db.executeQuery<R>({ ...compiled, parameters: slots.map((slot) => ('param' in slot ? params[slot.param] : slot.value)) });
  };
}
