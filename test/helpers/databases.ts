import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { allMigrations } from '../../src/db/migrations/index.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** The databases every data-layer and HTTP test runs against. */
export const databaseKinds: DatabaseKind[] = inject('postgresUrl') ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  kind: DatabaseKind;
  /** A DATABASE_URL that opens this same database (for the CLI and extra connections). */
  url: string;
  /** A fresh connection to it, migrated. */
  open(): Database;
  drop(): Promise<void>;
}

/** An empty, isolated database: a temporary SQLite file, or a new PostgreSQL schema. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-test-'));
    const url = `sqlite:${join(dir, 'test.sqlite')}`;
    return {
      kind,
      url,
      open: () => openDatabase(url),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const base = await fileDatabaseUrl();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind,
    url: url.toString(),
    open: () => openDatabase(url.toString(), { poolSize: 5 }),
    drop: async () => {
      const dropper = new pg.Client({ connectionString: base });
      await dropper.connect();
      await dropper.query(`drop schema if exists ${schema} cascade`);
      await dropper.end();
    },
  };
}

let fileDatabase: Promise<string> | null = null;

/**
 * One PostgreSQL database per test file, created on first use (test files run in
 * parallel; tests within a file do not). Schema introspection during migrations
 * reads every schema of a database, which must not race with another file
 * dropping its schemas. The run's global teardown drops these databases.
 */
function fileDatabaseUrl(): Promise<string> {
  fileDatabase ??= (async () => {
    const runUrl = inject('postgresUrl');
    if (!runUrl) throw new Error('PostgreSQL is not available in this run');
    const runName = new URL(runUrl).pathname.slice(1);
    const name = `${runName}_f${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: runUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(runUrl);
    url.pathname = `/${name}`;
    return url.toString();
  })();
  return fileDatabase;
}

/** Creates, opens and migrates a test database in one step. */
export async function openMigratedTestDatabase(kind: DatabaseKind): Promise<{ test: TestDatabase; database: Database }> {
  const test = await createTestDatabase(kind);
  const database = test.open();
  await migrateToLatest(database);
  return { test, database };
}

/** Applies the migrations up to and including `name` (a migration test's starting point: data of that schema). */
export async function migrateUpTo(database: Database, kind: DatabaseKind, name: string): Promise<void> {
  // On PostgreSQL the migration table lives in the test's own schema, as migrateToLatest puts it.
  const schema = kind === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => allMigrations(kind) },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error;
}
