/**
 * The service opened on a scale data set in the bench's own process: what the cases create
 * through the service (fresh scorers, batches) rather than by writing rows. No worker runs in it.
 */
import { createAppContext, type AppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { serverEnv } from '../fixtures.js';
import type { ScaleDataset } from './build.js';

export function openScaleContext(dataset: ScaleDataset, env: Record<string, string> = {}): Promise<AppContext> {
  const config = loadConfig({ ...serverEnv(dataset.dataDir, dataset.databaseUrl), BATCH_CONCURRENCY: '0', ...env });
  return createAppContext(config, openDatabase(dataset.databaseUrl));
}

/** A new scorer of the data set's account (its API key reads and submits for it): first scorings only. */
export async function freshScorer(ctx: AppContext, dataset: ScaleDataset, name: string): Promise<number> {
  const scorer = await ctx.accounts.createScorer(dataset.accountId, { name: `${name} ${new Date().toISOString()}`, type: 'weighted' });
  return scorer.id;
}
