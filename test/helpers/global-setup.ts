import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of this run's throw-away PostgreSQL database, or null when PostgreSQL is not available locally. */
    postgresUrl: string | null;
    /** Redis for the shared-state tests, or null when it is not available locally. */
    redisUrl: string | null;
  }
}

const adminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Creates one throw-away PostgreSQL database for the whole run (each test file
 * then isolates itself in its own schema). Without PostgreSQL a local run goes
 * on with SQLite only and says so once; under CI PostgreSQL is mandatory.
 */
async function checkRedis(project: TestProject): Promise<void> {
  const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    await client.ping();
    project.provide('redisUrl', url);
  } catch (error) {
    if (process.env.CI === 'true') throw new Error(`Redis is required under CI but ${url} is unreachable: ${(error as Error).message}`, { cause: error });
    console.warn(`Redis at ${url} is unreachable: the Redis tests are skipped (set TEST_REDIS_URL).`);
    project.provide('redisUrl', null);
  } finally {
    client.disconnect();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await checkRedis(project);
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    if (process.env.CI === 'true') {
      throw new Error(`PostgreSQL is required under CI but ${adminUrl} is unreachable: ${(error as Error).message}`, { cause: error });
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
    // Test files made databases of their own, named after this run's.
    const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${name}%`]);
    for (const row of rows) await admin.query(`drop database if exists ${row.datname} with (force)`);
    await admin.end();
  };
}
