import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import type { Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import { AppError } from '../errors.js';
import { WorkerWatch } from '../events/worker-watch.js';
import type { AccountService } from '../scoring/accounts/accounts.service.js';
import { type BatchService, operator } from '../scoring/batches/batches.service.js';
import type { V2ScoreService } from '../scoring/scores/v2-scores.service.js';
import type { TrustedIssuerService } from '../scoring/stamps/issuers.service.js';
import type { StampsRepository } from '../scoring/stamps/stamps.repository.js';
import { chainDeployments } from './chain-deployments.js';
import { decoderScoreReader } from './decoder-score-reads.js';
import { onchainService } from './onchain.service.js';
import { type BatchState, PushWorker } from './push-worker.js';
import { pushRepository } from './push.repository.js';
import { pushWorkersRepository } from './push-workers.repository.js';
import { pushService } from './push.service.js';
import { loadAttestationSigner } from './signer-key.js';
import { verifierReader } from './verifier-reads.js';

export type OnchainModuleConfig = Pick<
  Config,
  | 'env'
  | 'dataDir'
  | 'attestationSignerKey'
  | 'onchainConfigFile'
  | 'onchainRpcUrls'
  | 'attestationTtlDays'
  | 'outboundTimeoutMs'
  | 'onchainSenderKey'
  | 'onchainPushLeaseMs'
  | 'onchainPushConcurrency'
  | 'batchMaxAddresses'
>;

export interface OnchainModuleDeps {
  database: Database;
  v2: Pick<V2ScoreService, 'scoreNow'>;
  accounts: Pick<AccountService, 'scorerOfAccount' | 'getScorer'>;
  stamps: Pick<StampsRepository, 'liveForScoring'>;
  issuers: Pick<TrustedIssuerService, 'current'>;
  batches: Pick<BatchService, 'get'>;
  /** Where the push's absent-worker warnings go. */
  log: ConstructorParameters<typeof WorkerWatch>[1]['log'];
}

// An idle push worker looks for due jobs (and retries whose back-off passed) this often.
const pushPollMs = 1000;

/** A batch's state as a push that waits for it sees it. */
function batchStates(batches: Pick<BatchService, 'get'>) {
  return async (batchId: string): Promise<BatchState> => {
    try {
      const batch = await batches.get(operator, batchId);
      return batch.status === 'DONE' ? 'done' : batch.status === 'CANCELLED' ? 'cancelled' : 'running';
    } catch (error) {
      if (error instanceof AppError && error.code === 'batch_not_found') return 'gone';
      throw error;
    }
  };
}

/** The onchain layer: the signer key (loaded once), the deployment file, the verifier's and decoder's reads, the operator push. */
export async function createOnchainModule(config: OnchainModuleConfig, deps: OnchainModuleDeps) {
  const signer = await loadAttestationSigner(config);
  const deployments = chainDeployments(config);
  const service = onchainService({
    v2: deps.v2,
    accounts: deps.accounts,
    stamps: deps.stamps,
    issuers: deps.issuers,
    deployments,
    signer,
    readVerifier: verifierReader({ timeoutMs: config.outboundTimeoutMs }),
    readDecoderScore: decoderScoreReader({ timeoutMs: config.outboundTimeoutMs }),
    attestationTtlDays: config.attestationTtlDays,
  });
  const sender = config.onchainSenderKey === null ? null : privateKeyToAccount(config.onchainSenderKey as Hex);
  const repo = pushRepository(deps.database);
  const presence = pushWorkersRepository(deps.database);
  const worker = new PushWorker({
    repo,
    presence,
    batchState: batchStates(deps.batches),
    scoreNow: (scorerId, accountId, address) => deps.v2.scoreNow(scorerId, accountId, address),
    requests: service,
    deployments,
    sender,
    options: {
      leaseMs: config.onchainPushLeaseMs,
      concurrency: config.onchainPushConcurrency,
      pollMs: pushPollMs,
      rpcTimeoutMs: config.outboundTimeoutMs,
      receiptTimeoutMs: Math.max(config.onchainPushLeaseMs, 10_000),
    },
  });
  // Started by `serve` beside the scoring one: a push queued while no worker holds its sender key waits unsent.
  const watch =
    sender === null
      ? null
      : new WorkerWatch(
          { waiting: () => repo.queuedJobs(sender.address), lastSeen: () => presence.lastSeen(sender.address) },
          {
            leaseMs: config.onchainPushLeaseMs,
            pollMs: pushPollMs,
            code: 'no_push_worker',
            work: 'push job',
            consequence: 'nothing is sent until a worker runs with the same ONCHAIN_SENDER_KEY (`stampgate worker`, or `stampgate serve` without --no-worker).',
            log: deps.log,
          },
        );
  return {
    signer: signer === null ? null : { address: signer.address },
    service,
    push: {
      service: pushService({ repo, presence, accounts: deps.accounts, deployments, sender: sender?.address ?? null, maxAddresses: config.batchMaxAddresses, queued: () => worker.notify() }),
      worker,
      watch,
      /** A push worker unseen this long is gone (it beats every third of a lease). */
      workerThresholdMs: config.onchainPushLeaseMs + pushPollMs,
    },
  };
}

export type OnchainModule = Awaited<ReturnType<typeof createOnchainModule>>;
