/**
 * The operator push: a list of addresses queued as a durable job that a push worker
 * (push-worker.ts, run by `stampgate worker` and `serve`) sends to one chain for one scorer, and
 * its results read back. Everything is checked before anything is queued.
 */
import type { Address } from 'viem';
import { AppError } from '../errors.js';
import { type AccountService, isScorerId } from '../scoring/accounts/accounts.service.js';
import { addressesFromCsv } from '../scoring/batches/address-list.js';
import type { PushItemState } from '../db/tables/onchain.js';
import type { ChainDeployments } from './chain-deployments.js';
import type { NewPushJob, PushCounts, PushItemRow, PushJobRow, PushRepository } from './push.repository.js';
import type { PushWorkersRepository } from './push-workers.repository.js';

export interface PushServiceDeps {
  repo: PushRepository;
  presence: Pick<PushWorkersRepository, 'lastSeen'>;
  accounts: Pick<AccountService, 'getScorer'>;
  deployments: ChainDeployments;
  /** ONCHAIN_SENDER_KEY's address; null: no push. */
  sender: Address | null;
  /** Most addresses of one list (BATCH_MAX_ADDRESSES, as a batch). */
  maxAddresses: number;
  /** Tells this process's push worker that a job was queued. */
  queued?: () => void;
  clock?: () => number;
}

export interface PushJobView {
  id: string;
  chain_id: number;
  scorer_id: number;
  sender: string;
  status: 'queued' | 'done';
  /** The batch this push waits for before it sends anything, or null. */
  after_batch_id: string | null;
  total: number;
  /** Items per state; `pending` + `sent` are still open. */
  counts: PushCounts;
  created_at: string;
  finished_at: string | null;
}

/** One address's outcome (`pending`/`sent` while open). */
export interface PushResult {
  position: number;
  address: string;
  status: PushItemState;
  uid: string | null;
  tx_hash: string | null;
  reason: string | null;
}

function view(job: PushJobRow, counts: PushCounts): PushJobView {
  return {
    id: job.id,
    chain_id: job.chain_id,
    scorer_id: job.scorer_id,
    sender: job.sender,
    status: job.status,
    after_batch_id: job.after_batch_id,
    total: job.total,
    counts,
    created_at: new Date(job.created_at).toISOString(),
    finished_at: job.finished_at === null ? null : new Date(job.finished_at).toISOString(),
  };
}

export function resultOf(item: PushItemRow): PushResult {
  return {
    position: item.position,
    address: item.address,
    status: item.state,
    uid: item.uid,
    tx_hash: item.state === 'skipped' ? null : item.tx_hash,
    reason: item.state === 'failed' ? item.reason : null,
  };
}

export function pushService(deps: PushServiceDeps) {
  const clock = deps.clock ?? Date.now;

  async function find(id: string): Promise<PushJobRow> {
    const job = await deps.repo.job(id);
    if (!job) throw new AppError('not_found', `There is no push job ${id}.`);
    return job;
  }

  async function queue(job: NewPushJob): Promise<PushJobView> {
    const row = await deps.repo.create(job);
    deps.queued?.();
    return view(row, await deps.repo.counts(row.id));
  }

  return {
    /**
     * Refuses, before anything is queued, a push that could not be sent: no sender key, an unknown
     * chain or one without an RPC URL, an unknown scorer. Answers the scorer's account.
     */
    async check(chainId: number, scorerId: number): Promise<{ accountId: number; sender: Address }> {
      if (!deps.sender) throw new AppError('onchain_not_configured', 'ONCHAIN_SENDER_KEY is not set: the push has no key to send its transactions from.');
      const chain = await deps.deployments.find(chainId);
      deps.deployments.rpcUrl(chain);
      if (!isScorerId(scorerId)) throw new AppError('scorer_not_found', `There is no scorer ${scorerId}.`);
      const scorer = await deps.accounts.getScorer(scorerId);
      return { accountId: scorer.accountId, sender: deps.sender };
    },

    /**
     * Queues the addresses of `csvText` (one a line, an optional `address` header, as a batch's
     * CSV; repeats dropped, the first kept) for `chainId` and `scorerId`; refused as `check` does,
     * or for a bad line, with nothing queued.
     */
    async create(chainId: number, scorerId: number, csvText: string): Promise<PushJobView> {
      const { accountId, sender } = await this.check(chainId, scorerId);
      const addresses = [...new Set(addressesFromCsv(csvText, deps.maxAddresses))];
      return queue({ chainId, scorerId, accountId, sender, addresses, now: clock() });
    },

    /**
     * Queues a push of `addresses` (already checked, lower-case) that waits for batch `batchId`
     * to end: sent once it is DONE, failed (nothing sent) if it is cancelled.
     */
    async createAfterBatch(chainId: number, scorerId: number, batchId: string, addresses: readonly string[]): Promise<PushJobView> {
      const { accountId, sender } = await this.check(chainId, scorerId);
      return queue({ chainId, scorerId, accountId, sender, addresses: [...new Set(addresses)], now: clock(), afterBatchId: batchId });
    },

    /** When a push worker holding the sender key last looked for work (null: none seen, or no key). */
    async workerLastSeen(): Promise<number | null> {
      return deps.sender ? deps.presence.lastSeen(deps.sender) : null;
    },

    async job(id: string): Promise<PushJobView> {
      const job = await find(id);
      return view(job, await deps.repo.counts(id));
    },

    /** Results in list order from `fromPosition`, at most `limit`. */
    async results(id: string, fromPosition: number, limit: number): Promise<PushResult[]> {
      await find(id);
      return (await deps.repo.items(id, fromPosition, limit)).map(resultOf);
    },
  };
}

export type PushService = ReturnType<typeof pushService>;
