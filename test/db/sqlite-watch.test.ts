/**
 * SQLite processes notice each other's commits without a query per look: the file system says
 * when the database files were written, and only then is SQLite asked whether another connection
 * committed (this connection's own commits do not count).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/connection.js';
import { SqliteWriteWatch } from '../../src/db/sqlite-watch.js';

async function eventually(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the SQLite write watch', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function open(file: string): Database {
    const database = openDatabase(`sqlite:${file}`);
    cleanups.push(() => database.close());
    return database;
  }

  it('moves when another connection commits, not when its own does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-watch-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'db.sqlite');
    const mine = open(file);
    const theirs = open(file);
    await sql`create table t (n integer)`.execute(mine.db);
    const first = mine.writesElsewhere!();
    expect(first).not.toBeNull();

    await sql`insert into t values (1)`.execute(mine.db);
    // Its own commit: the files changed, SQLite says nobody else committed.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(mine.writesElsewhere!()).toBe(first);

    await sql`insert into t values (2)`.execute(theirs.db);
    await eventually(() => mine.writesElsewhere!() !== first);
    const second = mine.writesElsewhere!();
    // Nothing more happened: it stays.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(mine.writesElsewhere!()).toBe(second);
  });

  it('cannot tell (null) when its folder cannot be watched', () => {
    const watch = new SqliteWriteWatch(join(tmpdir(), 'stampgate-no-such-folder', 'db.sqlite'), () => 1);
    cleanups.push(() => watch.close());
    expect(watch.generation()).toBeNull();
  });
});
