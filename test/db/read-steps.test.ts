import SqliteDatabase from 'better-sqlite3';
import { type CompiledQuery, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, writeTransaction } from '../../src/db/connection.js';
import { type ReadSteps, rowsOf } from '../../src/db/read-steps.js';
import { createTestDatabase, type DatabaseKind, databaseKinds, type TestDatabase } from '../helpers/databases.js';

const query = <R>(database: Database, text: ReturnType<typeof sql<R>>): CompiledQuery<R> => text.compile(database.db);

function* countOf(database: Database): ReadSteps<number> {
  const [row] = yield* rowsOf(query(database, sql<{ n: number | string }>`select count(*) as n from numbers`));
  return Number(row?.n);
}

/** A fresh database per test with a table `numbers` holding 1 to 4. */
function numbersDatabase(kind: DatabaseKind): { test: TestDatabase; database: Database } {
  const state = {} as { test: TestDatabase; database: Database };
  beforeEach(async () => {
    state.test = await createTestDatabase(kind);
    state.database = state.test.open();
    await sql`create table numbers (n integer not null)`.execute(state.database.db);
    await sql`insert into numbers (n) values (1), (2), (3), (4)`.execute(state.database.db);
  });
  afterEach(async () => {
    await state.database.close();
    await state.test.drop();
  });
  return state;
}

describe.each(databaseKinds)('reads of several statements (Database.reads) on %s', (kind) => {
  const s = numbersDatabase(kind);

  it("hand each statement's rows back to the read, in order, and answer what it returns", async () => {
    const answer = await s.database.reads(
      (function* () {
        const count = yield* countOf(s.database);
        const rows = yield* rowsOf(query(s.database, sql<{ n: number }>`select n from numbers where n > ${count - 2} order by n desc`));
        return { count, above: rows.map((row) => Number(row.n)) };
      })(),
    );
    expect(answer).toEqual({ count: 4, above: [4, 3] });
  });


  it('wait for a transaction that holds the connection, and see what it committed', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
    const writing = writeTransaction(s.database, async (trx) => {
      await sql`insert into numbers (n) values (5)`.execute(trx);
      inserted();
      await held;
    });
    await insertedYet;
    let settled = false;
    const reading = s.database.reads(countOf(s.database)).then((count) => {
      settled = true;
      return count;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // SQLite has one connection: a read that ran now would run inside the open transaction and count its insert.
    if (kind === 'sqlite') expect(settled).toBe(false);
    release();
    await writing;
    expect(await reading).toBe(kind === 'sqlite' ? 5 : 4);
  });

  it('fail as their statement fails, leaving no transaction open behind them', async () => {
    const failing = s.database.reads(
      (function* () {
        yield* countOf(s.database);
        yield* rowsOf(query(s.database, sql`select n from no_such_table`));
        return 'unreachable';
      })(),
    );
    await expect(failing).rejects.toThrow(/no_such_table/);
    // A write transaction can begin (SQLite refuses to begin one inside another) and commits.
    await writeTransaction(s.database, async (trx) => sql`insert into numbers (n) values (6)`.execute(trx));
    expect(await s.database.reads(countOf(s.database))).toBe(5);
  });

});

// SQLite's runner reads synchronously in its own read transaction; PostgreSQL's runs each statement through Kysely.
describe('reads of several statements on SQLite', () => {
  const s = numbersDatabase('sqlite');

  it('read one snapshot: a commit by another connection between two statements is not seen', async () => {
    const other = new SqliteDatabase(s.test.url.slice('sqlite:'.length));
    try {
      const counts = await s.database.reads(
        (function* () {
          const before = yield* countOf(s.database);
          // Another connection (another process, say) commits while the read is between its statements.
          other.prepare('insert into numbers (n) values (5)').run();
          const after = yield* countOf(s.database);
          return [before, after];
        })(),
      );
      expect(counts).toEqual([4, 4]);
      // The next read sees it.
      expect(await s.database.reads(countOf(s.database))).toBe(5);
    } finally {
      other.close();
    }
  });

  it('refuse a statement that writes, and write nothing', async () => {
    const writing = s.database.reads(
      (function* () {
        yield* rowsOf(query(s.database, sql`insert into numbers (n) values (7)`));
        return null;
      })(),
    );
    await expect(writing).rejects.toThrow(/reads only/);
    // A write that returns rows is a reader to better-sqlite3: refused all the same.
    const returning = s.database.reads(rowsOf(query(s.database, sql`insert into numbers (n) values (8) returning n`)));
    await expect(returning).rejects.toThrow(/reads only/);
    expect(await s.database.reads(countOf(s.database))).toBe(4);
  });
});
