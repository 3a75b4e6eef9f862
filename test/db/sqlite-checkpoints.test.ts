/**
 * A long-running process checkpoints SQLite's WAL on a thread of its own: its commits never
 * checkpoint, the WAL still stays small under a stream of writes, and a thread that fails hands
 * checkpointing back to the commits.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { SqliteCheckpoints } from '../../src/db/sqlite-checkpoints.js';

const BURST_BYTES = 1 << 20;

async function eventually(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function walBytes(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}

describe('SQLite checkpoints on a thread', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function tempFile(): string {
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-checkpoints-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return join(dir, 'db.sqlite');
  }

  async function writeBursts(file: string, backgroundCheckpoints: boolean, bursts: number): Promise<{ autocheckpoint: number; largestWal: number }> {
    const database = openDatabase(`sqlite:${file}`, { backgroundCheckpoints });
    cleanups.push(() => database.close());
    await sql`create table t (body blob)`.execute(database.db);
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db);
    let largestWal = 0;
    for (let burst = 0; burst < bursts; burst++) {
      await database.db.transaction().execute(async (trx) => {
        for (let row = 0; row < 64; row++) await sql`insert into t (body) values (randomblob(${BURST_BYTES / 64}))`.execute(trx);
      });
      largestWal = Math.max(largestWal, walBytes(file));
      // Three of the thread's turns: a burst is copied into the database before the next one.
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return { autocheckpoint: rows[0]!.wal_autocheckpoint, largestWal };
  }

  it('keeps the WAL to about one burst of writes while the committing connection never checkpoints', async () => {
    const file = tempFile();
    const { autocheckpoint, largestWal } = await writeBursts(file, true, 12);
    expect(autocheckpoint).toBe(0);
    // Twelve bursts of 1 MB: a WAL nobody checkpointed would hold all of them.
    expect(largestWal).toBeGreaterThan(BURST_BYTES);
    expect(largestWal).toBeLessThan(3 * BURST_BYTES);
    const check = new SqliteDatabase(file);
    cleanups.push(() => void check.close());
    const [state] = check.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    expect(state!.checkpointed).toBe(state!.log);
  });

  it('leaves checkpoints to the commits where it is not asked for (SQLite default)', async () => {
    const { autocheckpoint } = await writeBursts(tempFile(), false, 1);
    expect(autocheckpoint).toBe(1000);
  });

  it('hands checkpointing back to the commits, with a warning, when the thread fails', async () => {
    const file = tempFile();
    const sqlite = new SqliteDatabase(file);
    cleanups.push(() => void sqlite.close());
    sqlite.pragma('journal_mode = WAL');
    const warnings: string[] = [];
    const log = { warn: (_: object, message: string) => warnings.push(message), info: () => {} };
    const checkpoints = new SqliteCheckpoints(sqlite, file, log, join(tmpdir(), 'no-such-driver.cjs'));
    cleanups.push(() => checkpoints.stop());
    expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await eventually(() => !checkpoints.running);
    expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(warnings).toEqual(['The SQLite checkpoint thread stopped; commits checkpoint the WAL themselves from now on.']);
  });

  it('stops with its database and warns of nothing', async () => {
    const file = tempFile();
    const sqlite = new SqliteDatabase(file);
    cleanups.push(() => void sqlite.close());
    sqlite.pragma('journal_mode = WAL');
    const warnings: string[] = [];
    const checkpoints = new SqliteCheckpoints(sqlite, file, { warn: (_, message) => warnings.push(message), info: () => {} });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(checkpoints.running).toBe(true);
    await checkpoints.stop();
    expect(checkpoints.running).toBe(false);
    expect(warnings).toEqual([]);
  });
});
