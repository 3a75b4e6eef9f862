import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of this run's throw-away PostgreSQL database, or null when PostgreSQL is not available locally. */
    postgresUrl: string | null;
  }
}

const adminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Creates one throw-away PostgreSQL database for the whole run (each test file
 * then isolates itself in its own schema). Without PostgreSQL a local run goes
 * on with SQLite only and says so once; under CI PostgreSQL is mandatory.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    if (process.env.CI === 'true') {
      throw new Error(`PostgreSQL is required under CI but ${adminUrl} is unreachable: ${(error as Error).message}`);
    }
    console.warn(`PostgreSQL at ${adminUrl} is unreachable: the PostgreSQL half of the tests is skipped (set TEST_POSTGRES_URL).`);
    project.provide('postgresUrl', null);
    return async () => {};
  }
  const name = `stampgate_test_${Date.now()}_${process.pid}`;
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  project.provide('postgresUrl', url.toString());
  return async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
}
