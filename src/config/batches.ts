/** Batch scoring settings: sizes, the per-tier daily quota, the batch worker. */
import { BadValue, forExample, integer, type Settings } from './parse.js';

export interface BatchConfig {
  batchSyncMaxAddresses: number;
  batchMaxAddresses: number;
  batchBodyLimitBytes: number;
  batchDailyAddresses: [number, number, number, number];
  batchConcurrency: number;
  batchChunkSize: number;
  batchLeaseMs: number;
  batchPollMs: number;
  batchResultsWaitMs: number;
  batchResultStreamsPerAccount: number;
  batchUploadsPerAccount: number;
  batchRetentionDays: number;
}

function tierList(name: string, fallback: [number, number, number, number]) {
  return (raw: string | undefined): [number, number, number, number] => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const items = raw.split(',').map((item) => item.trim());
    if (items.length !== 4 || items.some((item) => !/^\d{1,12}$/.test(item))) {
      throw new BadValue(`${name}=${JSON.stringify(raw)} must be four whole numbers separated by commas (tiers 1 to 4)${forExample(name, fallback.join(','))}`);
    }
    return items.map(Number) as [number, number, number, number];
  };
}

export const batchSettings: Settings<BatchConfig> = {
  batchSyncMaxAddresses: {
    key: 'batchSyncMaxAddresses',
    name: 'BATCH_SYNC_MAX_ADDRESSES',
    description: 'Most addresses of one synchronous batch, `POST /v2/stamps/{scorer_id}/scores` (each costs one rate-limit unit)',
    defaultText: '100',
    parse: integer('BATCH_SYNC_MAX_ADDRESSES', 1, 1000, 100),
  },
  batchMaxAddresses: {
    key: 'batchMaxAddresses',
    name: 'BATCH_MAX_ADDRESSES',
    description: 'Most addresses of one asynchronous batch, `POST /v2/scorers/{scorer_id}/batches`',
    defaultText: '100000',
    parse: integer('BATCH_MAX_ADDRESSES', 1, 1_000_000, 100_000),
  },
  batchBodyLimitBytes: {
    key: 'batchBodyLimitBytes',
    name: 'BATCH_BODY_LIMIT_BYTES',
    description: 'Largest request body of the asynchronous batch route (JSON or CSV); other routes keep BODY_LIMIT_BYTES',
    defaultText: '5242880 (5 MiB: 100,000 addresses as JSON)',
    parse: integer('BATCH_BODY_LIMIT_BYTES', 1024, 200 * 1024 * 1024, 5 * 1024 * 1024),
  },
  batchDailyAddresses: {
    key: 'batchDailyAddresses',
    name: 'BATCH_DAILY_ADDRESSES',
    description: 'Addresses one account (all its API keys and its portal session) may queue in asynchronous batches per UTC day, by the account\'s tier: four numbers, tiers 1 to 4',
    defaultText: '100000,500000,2000000,10000000',
    parse: tierList('BATCH_DAILY_ADDRESSES', [100_000, 500_000, 2_000_000, 10_000_000]),
  },
  batchConcurrency: {
    key: 'batchConcurrency',
    name: 'BATCH_CONCURRENCY',
    description: 'Batch chunks one worker process scores at the same time (0 turns batch work off in that process)',
    defaultText: '1',
    parse: integer('BATCH_CONCURRENCY', 0, 64, 1),
  },
  batchChunkSize: {
    key: 'batchChunkSize',
    name: 'BATCH_CHUNK_SIZE',
    description: 'Addresses per leased unit of batch work',
    defaultText: '250',
    parse: integer('BATCH_CHUNK_SIZE', 1, 10_000, 250),
  },
  batchLeaseMs: {
    key: 'batchLeaseMs',
    name: 'BATCH_LEASE_MS',
    description: "How long a worker's claim on a batch chunk lasts without progress; each scored address renews it, and a dead worker's chunk is taken over after it",
    defaultText: '30000',
    parse: integer('BATCH_LEASE_MS', 100, 3_600_000, 30_000),
  },
  batchPollMs: {
    key: 'batchPollMs',
    name: 'BATCH_POLL_MS',
    description: 'How often an idle batch worker looks for chunks, and how long it backs off while submissions are queued',
    defaultText: '500',
    parse: integer('BATCH_POLL_MS', 10, 60_000, 500),
  },
  batchResultsWaitMs: {
    key: 'batchResultsWaitMs',
    name: 'BATCH_RESULTS_WAIT_MS',
    description: 'How long `GET /v2/batches/{id}/results` of a running batch waits for the next result before ending the stream (resume with `offset`)',
    defaultText: '30000',
    parse: integer('BATCH_RESULTS_WAIT_MS', 0, 600_000, 30_000),
  },
  batchResultStreamsPerAccount: {
    key: 'batchResultStreamsPerAccount',
    name: 'BATCH_RESULT_STREAMS_PER_ACCOUNT',
    description: 'Most `GET /v2/batches/{id}/results` streams one account may have open at once in one API process (each one of a running batch polls the database); over it 429 `too_many_result_streams`',
    defaultText: '4',
    parse: integer('BATCH_RESULT_STREAMS_PER_ACCOUNT', 1, 1000, 4),
  },
  batchUploadsPerAccount: {
    key: 'batchUploadsPerAccount',
    name: 'BATCH_UPLOADS_PER_ACCOUNT',
    description: 'Most `POST /v2/scorers/{scorer_id}/batches` uploads one account may have under way at once in one API process (each is read, checked and written in steps); over it 429 `too_many_batch_uploads`',
    defaultText: '2',
    parse: integer('BATCH_UPLOADS_PER_ACCOUNT', 1, 100, 2),
  },
  batchRetentionDays: {
    key: 'batchRetentionDays',
    name: 'BATCH_RETENTION_DAYS',
    description: 'Days a batch is kept after it ended (DONE or CANCELLED); then it answers 404 and the batch worker deletes it with its items',
    defaultText: '30',
    parse: integer('BATCH_RETENTION_DAYS', 1, 3650, 30),
  },
};
