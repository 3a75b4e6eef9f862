/**
 * Every statement either driver runs while a piece of work is recorded, lower-cased: SQLite
 * statements are prepared once and run many times (the connection's statement cache), so each
 * prepared statement is wrapped. Importing this module installs the wrappers.
 */
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

let recording: string[] | null = null;
const note = (sql: string) => recording?.push(sql.trim().toLowerCase());

const sqlitePrepare = SqliteDatabase.prototype.prepare;
SqliteDatabase.prototype.prepare = function (this: SqliteDatabase.Database, sql: string) {
  const statement = sqlitePrepare.call(this, sql);
  for (const method of ['run', 'all', 'get', 'iterate'] as const) {
    const original = statement[method] as (...args: unknown[]) => unknown;
    (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      note(sql);
      return original.apply(statement, args);
    };
  }
  return statement;
} as typeof SqliteDatabase.prototype.prepare;

const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  note(typeof first === 'string' ? first : (first?.text ?? ''));
  return (pgQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

export async function statementsOf<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  recording = statements;
  try {
    return { result: await work(), statements };
  } finally {
    recording = null;
  }
}

/** A recorded statement with the values bound to it, to EXPLAIN it as it ran. */
export interface BoundStatement {
  sql: string;
  parameters: unknown[];
}

let boundRecording: BoundStatement[] | null = null;

const sqlitePrepareForBound = SqliteDatabase.prototype.prepare;
SqliteDatabase.prototype.prepare = function (this: SqliteDatabase.Database, sql: string) {
  const statement = sqlitePrepareForBound.call(this, sql);
  for (const method of ['run', 'all', 'get', 'iterate'] as const) {
    const original = statement[method] as (...args: unknown[]) => unknown;
    (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      boundRecording?.push({ sql, parameters: args });
      return original.apply(statement, args);
    };
  }
  return statement;
} as typeof SqliteDatabase.prototype.prepare;

const pgQueryForBound = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string; values?: unknown[] };
  if (boundRecording) {
    if (typeof first === 'string') boundRecording.push({ sql: first, parameters: Array.isArray(args[1]) ? (args[1] as unknown[]) : [] });
    else boundRecording.push({ sql: first?.text ?? '', parameters: first?.values ?? [] });
  }
  return (pgQueryForBound as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

/** Every statement run while `work` runs, with its bound values. */
export async function boundStatementsOf<T>(work: () => Promise<T>): Promise<{ result: T; statements: BoundStatement[] }> {
  const statements: BoundStatement[] = [];
  boundRecording = statements;
  try {
    return { result: await work(), statements };
  } finally {
    boundRecording = null;
  }
}
