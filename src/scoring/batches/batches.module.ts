import type { Config } from '../../config/index.js';
import type { Database } from '../../db/connection.js';
import type { AccountService } from '../accounts/accounts.service.js';
import { resultStreamSlots, uploadSlots } from './account-slots.js';
import { abandonedUploadMs, BatchRetention, sweepEveryMs } from './batch-retention.js';
import { batchRetentionRepository } from './batch-retention.repository.js';
import { batchUploadsRepository } from './batch-uploads.repository.js';
import { BatchWorker, type ScoreAddress, type ScoreChunk } from './batch-worker.js';
import { batchesRepository } from './batches.repository.js';
import { batchService } from './batches.service.js';
import type { V2ScoreService } from '../scores/v2-scores.service.js';

export interface BatchServicesDeps {
  accounts: AccountService;
  /** v2 scoring (scoreNow): batches score through it, with the batch item's write in its transaction. */
  v2: V2ScoreService;
}

/** Batch scoring: the repository, the service behind the routes and CLI, and this process's batch worker. */
export function createBatchServices(config: Config, database: Database, deps: BatchServicesDeps, clock: () => number = Date.now) {
  const repo = batchesRepository(database);
  const uploads = batchUploadsRepository(database);
  const retentionRepo = batchRetentionRepository(database);
  const retentionMs = config.batchRetentionDays * 86_400_000;
  const scoreAddress: ScoreAddress = (scorerId, accountId, address, withinTransaction) =>
    deps.v2.scoreNow(scorerId, accountId, address, withinTransaction ? { withinTransaction } : {});
  const scoreChunk: ScoreChunk = (scorerId, accountId, addresses, withinTransaction) => deps.v2.scoreChunk(scorerId, accountId, addresses, withinTransaction);
  // The sweep reports its faults with the worker's, as `failure` events.
  let reportFailure: (error: unknown) => void = () => {};
  const retention = new BatchRetention(retentionRepo, { retentionMs, sweepEveryMs, abandonedUploadMs }, (error) => reportFailure(error), clock);
  const worker = new BatchWorker(
    repo,
    { one: scoreAddress, chunk: scoreChunk },
    { concurrency: config.batchConcurrency, leaseMs: config.batchLeaseMs, pollMs: config.batchPollMs },
    clock,
    retention,
  );
  reportFailure = (error) => worker.emit('failure', error);
  const service = batchService(
    { repo, uploads, retention: retentionRepo, accounts: deps.accounts, scoreAddress, announce: () => worker.notify() },
    {
      syncMaxAddresses: config.batchSyncMaxAddresses,
      maxAddresses: config.batchMaxAddresses,
      bodyLimitBytes: config.batchBodyLimitBytes,
      chunkSize: config.batchChunkSize,
      retentionMs,
      dailyAddresses: config.batchDailyAddresses,
      resultsWaitMs: config.batchResultsWaitMs,
      resultsPollMs: Math.min(250, config.batchPollMs),
    },
    clock,
  );
  return {
    repo,
    service,
    worker,
    resultStreams: resultStreamSlots(config.batchResultStreamsPerAccount),
    uploads: uploadSlots(config.batchUploadsPerAccount),
  };
}

export type BatchServices = ReturnType<typeof createBatchServices>;
