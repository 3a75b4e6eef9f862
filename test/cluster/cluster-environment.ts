/**
 * Where the cluster test finds its services and sources, and whether it can run here at all
 * (it runs only under vitest.cluster.config.ts, and fails rather than skips under CI=true).
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';

export const repoDir = fileURLToPath(new URL('../../', import.meta.url));
export const adminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Null when PostgreSQL and Redis answer; otherwise why the test is skipped. */
export async function unavailableReason(): Promise<string | null> {
  if (process.env.STAMPGATE_CLUSTER_TEST !== '1') return 'it runs only with `npm run test:cluster` (vitest.cluster.config.ts)';
  const problems: string[] = [];
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    problems.push(`PostgreSQL at ${adminUrl} is unreachable (${(error as Error).message})`);
  } finally {
    await admin.end().catch(() => {});
  }
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    problems.push(`Redis at ${redisUrl} is unreachable (${(error as Error).message})`);
  } finally {
    redis.disconnect();
  }
  if (problems.length === 0) return null;
  if (process.env.CI === 'true') throw new Error(`The cluster test needs PostgreSQL and Redis under CI: ${problems.join('; ')}`);
  console.warn(`Cluster test skipped: ${problems.join('; ')} (set TEST_POSTGRES_URL / TEST_REDIS_URL).`);
  return problems.join('; ');
}
