import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  type Address,
  encodeFunctionData,
  getAddress,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type TransactionReceipt,
} from 'viem';
import { isUnreachable, rpcFailureReason } from '../chain/rpc.js';
import { isDatabaseUnavailable } from '../db/availability.js';
import { AppError } from '../errors.js';
import { PollingLoop } from '../events/polling-loop.js';
import type { V2Score } from '../scoring/scores/v2-scores.service.js';
import type { ChainDeployments } from './chain-deployments.js';
import type { ChainDeployment } from './deployment-file.js';
import type { OnchainService } from './onchain.service.js';
import { broadcastRefusal, feeCaps, pushClients, refusalOf, revertOfMined, scoreUidOf, signCall, verifierCallAbi } from './push-transactions.js';
import type { PushItemRow, PushJobRow, PushRepository } from './push.repository.js';
import type { PushWorkersRepository } from './push-workers.repository.js';

export interface PushWorkerOptions {
  leaseMs: number;
  /** Items (transactions) in flight at once. */
  concurrency: number;
  /** How often an idle worker looks for due jobs. */
  pollMs: number;
  /** Time limit of each RPC request. */
  rpcTimeoutMs: number;
  /** Longest wait for one receipt before the item is looked at again later. */
  receiptTimeoutMs: number;
}

/** Where a batch that a push waits for stands (`gone`: there is no such batch, or no more). */
export type BatchState = 'running' | 'done' | 'cancelled' | 'gone';

export interface PushWorkerDeps {
  repo: PushRepository;
  /** Where the worker records, every third of a lease, that it is alive and which key it holds. */
  presence: Pick<PushWorkersRepository, 'beat' | 'forgetLongGone'>;
  /** The state of the batch a job waits for (`after_batch_id`). */
  batchState: (batchId: string) => Promise<BatchState>;
  scoreNow: (scorerId: number, accountId: number, address: string) => Promise<{ score: V2Score; row: { status: string; error: string | null; event_id?: number | null } }>;
  requests: Pick<OnchainService, 'signedRequestFor'>;
  deployments: ChainDeployments;
  /** ONCHAIN_SENDER_KEY's account; null: no push (the worker does not start). */
  sender: PrivateKeyAccount | null;
  options: PushWorkerOptions;
  clock?: () => number;
}

export type PushItemDone = { jobId: string; position: number; state: 'attested' | 'skipped' | 'failed' };

const firstRetryMs = 500;
const longestRetryMs = 30_000;
// Errors before an item is signed that are neither the RPC being unreachable nor a refusal (a
// node's odd answer, a bug): tried this many times, then the item fails rather than holding the job for ever.
const mostOtherAttempts = 20;

class WorkerStopped extends Error {}

function stopSignal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

const backoff = (attempts: number) => Math.min(firstRetryMs * 2 ** Math.max(0, attempts - 1), longestRetryMs);

interface JobRun {
  job: PushJobRow;
  chain: ChainDeployment;
  client: PublicClient;
  sender: PrivateKeyAccount;
  lost: boolean;
}

/**
 * Works off push jobs (one job at a time per worker, leased; its items `concurrency` at a time
 * with consecutive nonces). Per item: score now (recording it), skip when this score event was
 * already sent, sign the verifier request and the raw transaction, store both with the nonce,
 * then broadcast and await the receipt. A crash between any two steps leaves the item pending
 * (nothing sent) or sent (the stored bytes are broadcast again, which can be mined once at most).
 * Nothing onchain happens inside a database transaction. Emits `itemDone` (PushItemDone),
 * `jobDone` (job id) and `failure` (Error; the worker goes on).
 */
export class PushWorker extends EventEmitter {
  readonly owner = `${hostname()}:${process.pid}:push:${randomBytes(4).toString('hex')}`;
  readonly #deps: PushWorkerDeps;
  readonly #clock: () => number;
  readonly #loop: PollingLoop;
  readonly #client: (url: string) => PublicClient;
  #jobFailures = 0;
  #beats: NodeJS.Timeout | null = null;
  // Resolved by stop(): a receipt awaited then is given up (the item stays sent, for the next worker).
  #stopped = stopSignal();

  constructor(deps: PushWorkerDeps) {
    super();
    this.setMaxListeners(0);
    this.#deps = deps;
    this.#clock = deps.clock ?? Date.now;
    this.#client = pushClients({ timeoutMs: deps.options.rpcTimeoutMs });
    this.#loop = new PollingLoop(() => this.#pass(), { pollMs: deps.options.pollMs, timer: 'restart', onError: (error) => this.emit('failure', error) });
  }

  /** The sender's address, or null when no ONCHAIN_SENDER_KEY is set. */
  get sender(): Address | null {
    return this.#deps.sender?.address ?? null;
  }

  get running(): boolean {
    return this.#loop.running;
  }

  /** Starts unless there is no sender key (then there is nothing it could send). */
  start(): boolean {
    if (!this.#deps.sender) return false;
    if (!this.#loop.running) this.#stopped = stopSignal();
    this.#loop.start();
    if (!this.#beats) {
      const { presence } = this.#deps;
      const sender = this.#deps.sender.address;
      // During a database outage the availability tracker has said so once; a beat every few seconds adds nothing.
      const beat = () =>
        void presence.beat(this.owner, sender, this.#clock()).catch((error: unknown) => {
          if (!isDatabaseUnavailable(error)) this.emit('failure', error);
        });
      beat();
      void presence.forgetLongGone(this.#clock()).catch(() => {});
      // Its own timer: a pass can last a whole job, and the beat must not wait for it.
      this.#beats = setInterval(beat, Math.max(100, Math.floor(this.#deps.options.leaseMs / 3)));
      this.#beats.unref();
    }
    return true;
  }

  notify(): void {
    this.#loop.wake();
  }

  /** Stops claiming; the items in flight finish their current step (their state is in the database either way). */
  async stop(): Promise<void> {
    this.#stopped.resolve();
    if (this.#beats) clearInterval(this.#beats);
    this.#beats = null;
    await this.#loop.stop();
  }

  async #pass(): Promise<void> {
    const sender = this.#deps.sender;
    if (!sender) return;
    while (this.#loop.running) {
      const { leaseMs } = this.#deps.options;
      const job = await this.#deps.repo.claimJob(this.owner, sender.address, this.#clock(), leaseMs);
      if (!job) return;
      if (job.after_batch_id !== null && !(await this.#batchEnded(job, job.after_batch_id))) continue;
      await this.#runJob(job, sender);
    }
  }

  /**
   * Whether the job may be worked: its batch is done. While the batch runs the job goes back until
   * the next poll; a cancelled or vanished batch fails the job's items (nothing is sent).
   */
  async #batchEnded(job: PushJobRow, batchId: string): Promise<boolean> {
    const { repo, options } = this.#deps;
    const state = await this.#deps.batchState(batchId).catch((error: unknown) => {
      this.emit('failure', error);
      return 'running' as const;
    });
    if (state === 'done') return true;
    if (state !== 'running') {
      await repo.failPending(job.id, state === 'cancelled' ? `batch ${batchId} was cancelled` : `batch ${batchId} is gone`, this.#clock());
      if (await repo.finishJob(job.id, this.owner, this.#clock())) this.emit('jobDone', job.id);
      return false;
    }
    await repo.releaseJob(job.id, this.owner, this.#clock() + options.pollMs);
    return false;
  }

  async #runJob(job: PushJobRow, sender: PrivateKeyAccount): Promise<void> {
    const { repo, options } = this.#deps;
    let run: JobRun;
    try {
      const chain = await this.#deps.deployments.find(job.chain_id);
      const client = this.#client(this.#deps.deployments.rpcUrl(chain));
      // The chain's count of the sender's transactions (pool included) is a floor for the counter:
      // it covers transactions this database never saw (the key used elsewhere).
      const pending = await client.getTransactionCount({ address: sender.address, blockTag: 'pending' });
      await repo.reconcileNonce(job.chain_id, sender.address, pending);
      run = { job, chain, client, sender, lost: false };
      this.#jobFailures = 0;
    } catch (error) {
      this.#jobFailures++;
      this.emit('failure', error);
      await repo.releaseJob(job.id, this.owner, this.#clock() + backoff(this.#jobFailures)).catch(() => {});
      return;
    }
    const renewal = setInterval(() => {
      void repo.renewLease(job.id, this.owner, this.#clock() + options.leaseMs).then(
        (held) => (run.lost ||= !held),
        () => {},
      );
    }, Math.max(100, Math.floor(options.leaseMs / 3)));
    try {
      while (this.#loop.running && !run.lost) {
        const items = await repo.dueItems(job.id, this.#clock(), options.concurrency);
        if (items.length === 0) {
          const next = await repo.nextDue(job.id);
          if (next === null) {
            if (await repo.finishJob(job.id, this.owner, this.#clock())) this.emit('jobDone', job.id);
          } else {
            await repo.releaseJob(job.id, this.owner, next);
          }
          return;
        }
        await Promise.all(items.map((item) => this.#runItem(run, item)));
      }
      await repo.releaseJob(job.id, this.owner, this.#clock());
    } catch (error) {
      this.emit('failure', error);
      await repo.releaseJob(job.id, this.owner, this.#clock() + backoff(1)).catch(() => {});
    } finally {
      clearInterval(renewal);
    }
  }

  async #runItem(run: JobRun, item: PushItemRow): Promise<void> {
    const { repo } = this.#deps;
    let current = item;
    try {
      if (item.state === 'pending') {
        const prepared = await this.#prepare(run, item);
        if (prepared === null) return;
        current = prepared;
      }
      await this.#confirm(run, current);
    } catch (error) {
      if (error instanceof WorkerStopped) return;
      if (isDatabaseUnavailable(error)) throw error;
      this.emit('failure', error);
      const attempts = item.attempts + 1;
      const reason = error instanceof AppError ? error.message : rpcFailureReason(error);
      // A signed item is never given up: its transaction may still be mined (and its nonce, unused, would stall every later one).
      const signed = current.state === 'sent';
      if (!signed && !isUnreachable(error) && !(error instanceof AppError && error.code === 'upstream_unavailable') && attempts >= mostOtherAttempts) {
        await this.#fail(run, item, `gave up after ${attempts} attempts: ${reason}`);
        return;
      }
      await repo.retryLater(run.job.id, item.position, reason, this.#clock() + backoff(attempts));
    }
  }

  /** Scores, checks the claim, signs and stores; the item as sent, or null when it was finished here (skipped, failed). */
  async #prepare(run: JobRun, item: PushItemRow): Promise<PushItemRow | null> {
    const { repo } = this.#deps;
    const { job, chain, client, sender } = run;
    let scored: Awaited<ReturnType<PushWorkerDeps['scoreNow']>>;
    try {
      scored = await this.#deps.scoreNow(job.scorer_id, job.account_id, item.address);
    } catch (error) {
      // The scorer is gone or refuses the address: that is final for this item.
      if (error instanceof AppError && error.code !== 'upstream_unavailable' && error.code !== 'database_unavailable') {
        await this.#fail(run, item, error.message);
        return null;
      }
      throw error;
    }
    const eventId = scored.row.event_id ?? null;
    if (scored.row.status !== 'DONE' || eventId === null) {
      await this.#fail(run, item, scored.row.error ?? 'the address could not be scored');
      return null;
    }
    if (await repo.alreadySent(job.chain_id, job.scorer_id, item.address, eventId)) {
      await repo.markSkipped(job.id, item.position, eventId, this.#clock());
      this.#done(job, item, 'skipped');
      return null;
    }
    const answer = await this.#deps.requests.signedRequestFor(chain, item.address, job.scorer_id, scored.score);
    const request = {
      recipient: answer.request.recipient,
      attestations: answer.request.attestations.map((a) => ({ schema: a.schema, expirationTime: BigInt(a.expirationTime), data: a.data })),
      nonce: BigInt(answer.request.nonce),
      deadline: BigInt(answer.request.deadline),
      fee: BigInt(answer.request.fee),
    };
    const args = [request, answer.signature.v, answer.signature.r, answer.signature.s] as const;
    const verifier = getAddress(chain.verifier);
    let gas: bigint;
    try {
      // Estimating runs the call: a refusal (a removed signer, a wrong fee) shows here, before any nonce is taken.
      gas = await client.estimateContractGas({ address: verifier, abi: verifierCallAbi, functionName: 'verifyAndAttest', args, account: sender.address, value: request.fee });
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal === null) throw error;
      await this.#fail(run, item, refusal);
      return null;
    }
    const fees = await feeCaps(client);
    const data = encodeFunctionData({ abi: verifierCallAbi, functionName: 'verifyAndAttest', args });
    const stored = await repo.storeSigned(job, item, eventId, this.#clock(), (nonce) =>
      signCall(sender, { chainId: job.chain_id, to: verifier, data, value: request.fee, gas, nonce, fees }),
    );
    if (stored === 'taken') {
      this.#done(job, item, 'skipped');
      return null;
    }
    return { ...item, state: 'sent', score_event_id: eventId, sender_nonce: stored.nonce, raw_tx: stored.signed.rawTx, tx_hash: stored.signed.txHash };
  }

  /** Broadcasts the stored transaction (again, after a crash) and settles the item by its receipt. */
  async #confirm(run: JobRun, item: PushItemRow): Promise<void> {
    const { repo } = this.#deps;
    const { job, client } = run;
    const hash = item.tx_hash as Hex;
    let nonceUsed = false;
    try {
      await client.sendRawTransaction({ serializedTransaction: item.raw_tx as Hex });
    } catch (error) {
      const refusal = broadcastRefusal(error);
      if (refusal === null) throw error;
      nonceUsed = refusal === 'nonce-used';
    }
    let receipt: TransactionReceipt;
    if (nonceUsed) {
      const mined = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
        if (error instanceof TransactionReceiptNotFoundError) return null;
        throw error;
      });
      if (!mined) {
        const known = await client.getTransaction({ hash }).catch((error: unknown) => {
          if (error instanceof TransactionNotFoundError) return null;
          throw error;
        });
        // Its nonce went to another transaction of the sender: this one can never be mined.
        if (!known) {
          // The key is in use elsewhere: the counter catches up before the item takes a new nonce.
          const pending = await client.getTransactionCount({ address: run.sender.address, blockTag: 'pending' });
          await repo.reconcileNonce(job.chain_id, run.sender.address, pending);
          await repo.restart(job.id, item.position);
          return;
        }
      }
      receipt = mined ?? (await this.#receipt(client, hash));
    } else {
      receipt = await this.#receipt(client, hash);
    }
    if (receipt.status === 'success') {
      const uid = scoreUidOf(receipt, item.address, run.chain.score_schema_uid);
      if (uid === null) {
        await this.#fail(run, item, 'the receipt has no score attestation');
        return;
      }
      await repo.markAttested(job.id, item.position, uid, this.#clock());
      this.#done(job, item, 'attested');
      return;
    }
    const tx = await client.getTransaction({ hash });
    await this.#fail(run, item, await revertOfMined(client, run.sender.address, { hash, to: tx.to as Address, data: tx.input, value: tx.value }, receipt));
  }

  async #receipt(client: PublicClient, hash: Hex): Promise<TransactionReceipt> {
    const stopped = this.#stopped.promise.then(() => {
      throw new WorkerStopped();
    });
    return Promise.race([client.waitForTransactionReceipt({ hash, timeout: this.#deps.options.receiptTimeoutMs }), stopped]);
  }

  async #fail(run: JobRun, item: PushItemRow, reason: string): Promise<void> {
    await this.#deps.repo.markFailed(run.job, item, reason, this.#clock());
    this.#done(run.job, item, 'failed');
  }

  #done(job: PushJobRow, item: PushItemRow, state: PushItemDone['state']): void {
    this.emit('itemDone', { jobId: job.id, position: item.position, state } satisfies PushItemDone);
  }
}
