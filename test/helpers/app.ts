import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createAppContext, type AppContext, type ContextOptions } from '../../src/app/container.js';
import type { Permission } from '../../src/scoring/accounts/permissions.js';
import { loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/app/server.js';
import { type DatabaseKind, openMigratedTestDatabase, type TestDatabase } from './databases.js';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  test: TestDatabase;
  close(): Promise<void>;
}

/** A server on a fresh, migrated database of the given kind, for `app.inject`. */
/**
 * The bus's peers in tests (events/bus-peers.ts): a short lease, so that a process's first writes
 * after it began to hear (which wait one lease) cost a test a quarter second, not 1.5 s. The
 * two-process score cache test runs with the production timings.
 */
export const testPeerTimings = { pingMs: 25, leaseMs: 250 };

export async function createTestApp(kind: DatabaseKind, env: Record<string, string> = {}, options: Omit<ContextOptions, 'http'> = {}): Promise<TestApp> {
  const { test, database } = await openMigratedTestDatabase(kind);
  const dataDir = mkdtempSync(join(tmpdir(), 'stampgate-data-'));
  const config = loadConfig({ STAMPGATE_ENV: 'development', API_KEY_CACHE_TTL_MS: '0', DATA_DIR: dataDir, ...env, DATABASE_URL: test.url });
  const ctx = await createAppContext(config, database, { busPeers: testPeerTimings, ...options, http: true });
  const app = await buildServer(ctx, { logger: false });
  await app.ready();
  return {
    app,
    ctx,
    test,
    close: async () => {
      await app.close();
      await ctx.close();
      await test.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An account with a scorer and a key, the usual starting point of an HTTP test. */
export async function seedAccount(ctx: AppContext, options: { tier?: number; canSubmit?: boolean; canRead?: boolean; permissions?: Permission[]; type?: 'weighted' | 'binary' } = {}) {
  const account = await ctx.accounts.createAccount('Test account');
  const scorer = await ctx.accounts.createScorer(account.id, { name: 'Test scorer', type: options.type ?? 'weighted' });
  const { key, apiKey } = await ctx.apiKeys.create(account.id, {
    tier: options.tier ?? 1,
    canSubmit: options.canSubmit,
    canRead: options.canRead,
    ...(options.permissions ? { permissions: options.permissions } : {}),
  });
  return { account, scorer, key, apiKey };
}

/**
 * Starts the context's scoring worker and waits until nothing else will make it look for jobs on
 * its own: the LISTEN connection up (on PostgreSQL its arrival makes the worker look, since
 * notices sent before it are lost) and that look answered. Tests that record the statements of
 * a submission start the worker this way.
 */
export async function startWorkerSettled(ctx: AppContext): Promise<void> {
  ctx.worker.start();
  await ctx.signals.listen();
  await ctx.worker.lookedForWork();
}
