import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { openDatabase, writeTransaction } from '../../src/db/connection.js';
import { isDatabaseUnavailable } from '../../src/db/availability.js';
import { createTestDatabase } from '../helpers/databases.js';

// Only PostgreSQL has a pool to wait for (SQLite uses one in-process connection and its lock wait
// is the query timeout, unchanged).
describe.runIf(inject('postgresUrl'))('the PostgreSQL pool', () => {
  it('fails a query that waits for a free connection after the connect timeout, not the query timeout', async () => {
    const test = await createTestDatabase('postgres');
    const database = openDatabase(test.url, { poolSize: 1, connectTimeoutMs: 300, queryTimeoutMs: 4000 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      // A transaction holds the only connection until released.
      let started!: () => void;
      const inside = new Promise<void>((resolve) => (started = resolve));
      const transaction = database.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        started();
        await held;
      });
      await inside;
      const before = performance.now();
      const error = await sql`select 1`.execute(database.db).then(
        () => null,
        (e: unknown) => e,
      );
      const waitedMs = performance.now() - before;
      expect(error).not.toBeNull();
      expect(isDatabaseUnavailable(error)).toBe(true); // answered 503 database_unavailable
      expect(waitedMs).toBeGreaterThanOrEqual(250);
      expect(waitedMs).toBeLessThan(2500); // well below the 4 s query timeout
      release();
      await transaction;
      // The pool is usable again once the connection is back.
      expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
    } finally {
      release();
      await database.close();
      await test.drop();
    }
  });

  it('runs a parameterised statement as a named prepared statement, and past a table change made under it', async () => {
    const test = await createTestDatabase('postgres');
    const database = openDatabase(test.url, { poolSize: 1 });
    try {
      await sql`create table named_probe (id int primary key, label text)`.execute(database.db);
      await sql`insert into named_probe values (1, 'one'), (2, 'two')`.execute(database.db);
      const read = (id: number) => sql<{ id: number; label: string }>`select * from named_probe where id = ${id}`.execute(database.db);
      expect((await read(1)).rows).toEqual([{ id: 1, label: 'one' }]);
      expect((await read(2)).rows).toEqual([{ id: 2, label: 'two' }]);
      // The one connection holds the statement under a name of ours, prepared once.
      const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(database.db);
      expect(prepared.rows.filter((r) => r.statement.includes('from named_probe where id'))).toHaveLength(1);
      expect(prepared.rows.every((r) => r.name.startsWith('stampgate_'))).toBe(true);
      // A migration adds a column: the prepared `select *` would now change its result type.
      await sql`alter table named_probe add column extra int default 7`.execute(database.db);
      expect((await read(2)).rows).toEqual([{ id: 2, label: 'two', extra: 7 }]);
      expect((await read(1)).rows).toEqual([{ id: 1, label: 'one', extra: 7 }]);

      // The server session lost its statements (as behind a transaction-mode pooler): answered, not poisoned.
      const byLabel = (label: string) => sql<{ id: number }>`select id from named_probe where label = ${label}`.execute(database.db);
      expect((await byLabel('one')).rows).toEqual([{ id: 1 }]);
      await sql`deallocate all`.execute(database.db);
      expect((await byLabel('two')).rows).toEqual([{ id: 2 }]);
      expect((await byLabel('one')).rows).toEqual([{ id: 1 }]);

      // Inside any other transaction nothing is prepared, so a table changed in it can be read in it (a migration).
      await database.db.transaction().execute(async (trx) => {
        const inside = (id: number) => sql<Record<string, unknown>>`select * from named_probe where id = ${id} and ${id} > 0`.execute(trx);
        expect((await inside(1)).rows).toHaveLength(1);
        await sql`alter table named_probe add column later int default 8`.execute(trx);
        expect((await inside(1)).rows).toEqual([{ id: 1, label: 'one', extra: 7, later: 8 }]);
      });
    } finally {
      await database.close();
      await test.drop();
    }
  });

  it('names the statements of a write transaction, and runs the transaction again when one went stale', async () => {
    const test = await createTestDatabase('postgres');
    const database = openDatabase(test.url, { poolSize: 1 });
    try {
      await sql`create table tx_probe (id int primary key, label text)`.execute(database.db);
      await sql`insert into tx_probe values (1, 'one')`.execute(database.db);
      let attempts = 0;
      const insertAndRead = (id: number) =>
        writeTransaction(database, async (trx) => {
          attempts += 1;
          await sql`insert into tx_probe (id, label) values (${id}, ${`n${id}`})`.execute(trx);
          return (await sql<Record<string, unknown>>`select * from tx_probe where id = ${1}`.execute(trx)).rows;
        });
      expect(await insertAndRead(2)).toEqual([{ id: 1, label: 'one' }]);
      const prepared = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(database.db);
      expect(prepared.rows.filter((r) => r.statement.includes('from tx_probe where id'))).toHaveLength(1);
      expect(prepared.rows.filter((r) => r.statement.includes('insert into tx_probe'))).toHaveLength(1);

      // Another process migrates the table: the prepared `select *` fails inside the transaction,
      // which is rolled back and run once more with the statement unnamed.
      await sql`alter table tx_probe add column extra int default 7`.execute(database.db);
      attempts = 0;
      expect(await insertAndRead(3)).toEqual([{ id: 1, label: 'one', extra: 7 }]);
      expect(attempts).toBe(2);
      const rows = await sql<{ id: number }>`select id from tx_probe order by id`.execute(database.db);
      expect(rows.rows.map((r) => r.id)).toEqual([1, 2, 3]); // the failed attempt's insert was rolled back
    } finally {
      await database.close();
      await test.drop();
    }
  });

  it('runs a write transaction again until none of its statements is stale, on any connection of the pool', async () => {
    const test = await createTestDatabase('postgres');
    const database = openDatabase(test.url, { poolSize: 2 });
    try {
      await sql`create table tx_pool_probe (id int primary key, label text)`.execute(database.db);
      await sql`insert into tx_pool_probe values (1, 'one')`.execute(database.db);
      let attempts = 0;
      const readTwice = (gate?: Promise<void>, arrived?: () => void) =>
        writeTransaction(database, async (trx) => {
          attempts += 1;
          const byId = await sql<Record<string, unknown>>`select * from tx_pool_probe where id = ${1}`.execute(trx);
          const byLabel = await sql<Record<string, unknown>>`select * from tx_pool_probe where label = ${'one'}`.execute(trx);
          arrived?.();
          await gate;
          return [byId.rows, byLabel.rows];
        });
      // Two transactions at once: both connections of the pool prepare both statements.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let waiting = 2;
      const arrived = () => (--waiting === 0 ? open() : undefined);
      await Promise.all([readTwice(gate, arrived), readTwice(gate, arrived)]);
      const prepared = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(database.db);
      expect(prepared.rows.filter((r) => r.statement.includes('from tx_pool_probe'))).toHaveLength(2);

      // Both statements go stale on both connections; each run unnames the one that failed.
      await sql`alter table tx_pool_probe add column extra int default 7`.execute(database.db);
      attempts = 0;
      const row = { id: 1, label: 'one', extra: 7 };
      expect(await readTwice()).toEqual([[row], [row]]);
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect(attempts).toBeLessThanOrEqual(3);
    } finally {
      await database.close();
      await test.drop();
    }
  });
});
