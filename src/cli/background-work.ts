import type { Logger } from 'pino';
import type { AppContext } from '../app/container.js';
import { logWorkerEvents } from '../scoring/jobs/scoring-worker.js';
import { logWebhookWorkerEvents } from '../webhooks/webhook-worker.js';
import type { IndexRun } from '../staking/staking-indexer.js';
import type { CliIo } from './context.js';

/** Starts what `worker` runs and `serve` runs unless `--no-worker`: the scoring worker, and the staking indexer when configured. */
export function startBackgroundWork(ctx: AppContext, logger: Logger, io: CliIo): void {
  const isOutage = (error: unknown) => ctx.database.availability.observe(error);
  logWorkerEvents(ctx.worker, logger, isOutage);
  // Jobs queued by other processes wake this worker at once (PostgreSQL); otherwise it polls.
  void ctx.signals.listen();
  ctx.worker.start();
  io.out(`Scoring worker ${ctx.worker.owner} started.`);
  logWebhookWorkerEvents(ctx.webhooks.worker, logger, isOutage);
  ctx.webhooks.worker.start();
  if (!ctx.webhooks.configured) logger.warn('WEBHOOK_SECRET_KEY is not set: webhooks can be neither registered nor sent');
  io.out(`Webhook worker ${ctx.webhooks.worker.owner} started.`);
  startBatchWorker(ctx, logger, io, isOutage);
  startPushWorker(ctx, logger, io, isOutage);
  const indexer = ctx.staking.indexer;
  if (!indexer) return;
  indexer.on('indexed', (run: IndexRun) =>
    logger.info({ contract: run.contract, fromBlock: run.fromBlock, toBlock: run.toBlock, logs: run.logs, stored: run.stored }, 'staking events indexed'),
  );
  // One line per failed run; the loop tries again on its next poll.
  indexer.on('failure', (error: Error) => {
    if (!isOutage(error)) logger.warn({ err: error.message }, 'staking indexer run failed');
  });
  indexer.start();
  io.out(`Staking indexer following ${indexer.options.contractAddress} (from block ${indexer.options.startBlock}).`);
}

/** The batch worker runs where the scoring worker runs, at a lower priority (see BatchWorker). */
function startBatchWorker(ctx: AppContext, logger: Logger, io: CliIo, isOutage: (error: unknown) => boolean): void {
  const worker = ctx.batches.worker;
  if (ctx.config.batchConcurrency === 0) return;
  worker.on('batchDone', (batchId: string) => logger.info({ batchId }, 'batch done'));
  worker.on('failure', (error: Error) => {
    if (!isOutage(error)) logger.warn({ owner: worker.owner, err: error?.message }, 'batch scoring attempt failed');
  });
  worker.start();
  io.out(`Batch worker ${worker.owner} started (concurrency ${ctx.config.batchConcurrency}).`);
}

/** The operator push's sender, where ONCHAIN_SENDER_KEY is set (a job names its sender: only its key's workers send it). */
function startPushWorker(ctx: AppContext, logger: Logger, io: CliIo, isOutage: (error: unknown) => boolean): void {
  const worker = ctx.onchain.push.worker;
  worker.on('jobDone', (jobId: string) => logger.info({ jobId }, 'onchain push done'));
  // An RPC endpoint that is down fails every attempt: the items wait with back-off, the log says why.
  worker.on('failure', (error: Error) => {
    if (!isOutage(error)) logger.warn({ owner: worker.owner, err: error?.message?.split('\n')[0] }, 'onchain push attempt failed');
  });
  if (worker.start()) io.out(`Onchain push worker ${worker.owner} started (sender ${worker.sender}).`);
}
