import type { Config } from '../../config/index.js';
import type { Database } from '../../db/connection.js';
import type { AccountService } from '../accounts/accounts.service.js';
import { BatchWorker, type ScoreAddress } from './batch-worker.js';
import { batchesRepository } from './batches.repository.js';
import { batchService } from './batches.service.js';
import { resultStreamSlots } from './result-streams.js';
import type { V2ScoreService } from '../scores/v2-scores.service.js';

export interface BatchServicesDeps {
  accounts: AccountService;
  /** v2 scoring (scoreNow): batches score through it, with the batch item's write in its transaction. */
  v2: V2ScoreService;
}

/** Batch scoring: the repository, the service behind the routes and CLI, and this process's batch worker. */
export function createBatchServices(config: Config, database: Database, deps: BatchServicesDeps, clock: () => number = Date.now) {
  const repo = batchesRepository(database);
  const scoreAddress: ScoreAddress = (scorerId, accountId, address, withinTransaction) =>
    deps.v2.scoreNow(scorerId, accountId, address, withinTransaction ? { withinTransaction } : {});
  const worker = new BatchWorker(
    repo,
    scoreAddress,
    { concurrency: config.batchConcurrency, leaseMs: config.batchLeaseMs, pollMs: config.batchPollMs },
    clock,
  );
  const service = batchService(
    { repo, accounts: deps.accounts, scoreAddress, announce: () => worker.notify() },
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
  return { repo, service, worker, resultStreams: resultStreamSlots(config.batchResultStreamsPerAccount) };
}

export type BatchServices = ReturnType<typeof createBatchServices>;
