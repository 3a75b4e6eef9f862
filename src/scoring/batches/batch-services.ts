import type { Config } from '../../config/index.js';
import type { Database } from '../../db/connection.js';
import type { AccountService } from '../accounts/accounts.service.js';
import { BatchWorker, type ScoreAddress } from './batch-worker.js';
import { batchesRepository } from './batches.repository.js';
import { batchService } from './batches.service.js';

export interface BatchServicesDeps {
  accounts: AccountService;
  /** v2 scoring of one address now (scoreNow), with the batch item's write in its transaction. */
  scoreAddress: ScoreAddress;
  /** The stored v2 score object of an address, null when it has none. */
  storedScore: (scorerId: number, address: string) => Promise<object | null>;
}

/** Batch scoring: the repository, the service behind the routes and CLI, and this process's batch worker. */
export function createBatchServices(config: Config, database: Database, deps: BatchServicesDeps, clock: () => number = Date.now) {
  const repo = batchesRepository(database);
  const worker = new BatchWorker(
    repo,
    deps.scoreAddress,
    { concurrency: config.batchConcurrency, leaseMs: config.batchLeaseMs, pollMs: config.batchPollMs },
    clock,
  );
  const service = batchService(
    { repo, accounts: deps.accounts, scoreAddress: deps.scoreAddress, storedScore: deps.storedScore, announce: () => worker.notify() },
    {
      syncMaxAddresses: config.batchSyncMaxAddresses,
      maxAddresses: config.batchMaxAddresses,
      chunkSize: config.batchChunkSize,
      dailyAddresses: config.batchDailyAddresses,
      resultsWaitMs: config.batchResultsWaitMs,
      resultsPollMs: Math.min(250, config.batchPollMs),
    },
    clock,
  );
  return { repo, service, worker };
}

export type BatchServices = ReturnType<typeof createBatchServices>;
