import { EventEmitter } from 'node:events';
import type { PublicClient } from 'viem';
import { isUnreachable, rpcEndpointName, rpcFailureReason } from '../chain/rpc.js';
import { fetchStakeEvents } from '../chain/staking-contract.js';
import { AppError } from '../errors.js';
import type { StakeEventsRepository } from './stake-events.repository.js';

export interface StakingIndexerOptions {
  /** RPC endpoint URL (only its scheme and host appear in messages). */
  rpcUrl: string;
  /** Lower-case address of the staking contract. */
  contractAddress: string;
  /** First block to read when nothing is stored yet. */
  startBlock: number;
  /** Blocks behind the head that are not read yet (reorganisation tolerance). */
  confirmations: number;
  /** Blocks per `eth_getLogs` request. */
  blockRange: number;
  /** Pause between runs of the loop. */
  pollMs: number;
}

/** What one run did. Block numbers are inclusive; `fromBlock`/`toBlock` are null when there was nothing to read. */
export interface IndexRun {
  contract: string;
  head: number;
  /** The newest block old enough to read: head − confirmations. */
  safeBlock: number;
  confirmations: number;
  fromBlock: number | null;
  toBlock: number | null;
  requests: number;
  logs: number;
  stored: number;
  unchanged: number;
  /** Every block up to this one is stored (null before any block was read). */
  lastBlock: number | null;
}

/**
 * Follows the staking contract's `selfStake`/`xStake` logs into the event store.
 * Each block range is stored together with the cursor in one transaction, so a
 * restart continues after the last stored range; logs are keyed by transaction
 * hash + log index, so reading a range again counts nothing twice. It stays
 * `confirmations` blocks behind the head.
 *
 * `runOnce()` reads up to the safe block and returns what it did; `start()` runs
 * it every `pollMs` until `stop()`. Emits `indexed` (an IndexRun with new blocks)
 * and `failure` (an error of one run; the loop goes on).
 */
export class StakingIndexer extends EventEmitter {
  readonly #client: PublicClient;
  readonly #repo: StakingIndexerRepo;
  readonly #options: StakingIndexerOptions;
  readonly #clock: () => number;
  #current: Promise<unknown> = Promise.resolve();
  #running = false;
  #stopping = false;
  #timer: NodeJS.Timeout | null = null;

  constructor(client: PublicClient, repo: StakingIndexerRepo, options: StakingIndexerOptions, clock: () => number = Date.now) {
    super();
    this.#client = client;
    this.#repo = repo;
    this.#options = options;
    this.#clock = clock;
  }

  get options(): Readonly<StakingIndexerOptions> {
    return this.#options;
  }

  /**
   * Reads every block from the stored cursor (or the start block) up to head −
   * confirmations. `fromBlock` re-reads from an earlier block; what is already
   * stored stays and the cursor never moves back. Runs never overlap.
   */
  runOnce(options: { fromBlock?: number } = {}): Promise<IndexRun> {
    return this.#enqueue(options.fromBlock, false);
  }

  #enqueue(fromBlock: number | undefined, interruptible: boolean): Promise<IndexRun> {
    const run = this.#current.catch(() => undefined).then(() => this.#index(fromBlock, interruptible));
    this.#current = run;
    return run;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopping = false;
    void this.#loop();
  }

  /** Stops the loop after the block range in hand and waits for it. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#stopping = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#current.catch(() => undefined);
  }

  async #loop(): Promise<void> {
    if (!this.#running) return;
    try {
      const run = await this.#enqueue(undefined, true);
      if (run.fromBlock !== null) this.emit('indexed', run);
    } catch (error) {
      this.emit('failure', error);
    }
    if (!this.#running) return;
    this.#timer = setTimeout(() => void this.#loop(), this.#options.pollMs);
    this.#timer.unref();
  }

  async #index(fromBlock: number | undefined, interruptible: boolean): Promise<IndexRun> {
    const { contractAddress: contract, confirmations, blockRange, startBlock } = this.#options;
    const head = Number(await this.#rpc('read the chain head', () => this.#client.getBlockNumber({ cacheTime: 0 })));
    const safeBlock = head - confirmations;
    const cursor = await this.#repo.cursor(contract);
    const first = Math.max(startBlock, fromBlock ?? (cursor === null ? startBlock : cursor + 1));
    const run: IndexRun = {
      contract,
      head,
      safeBlock,
      confirmations,
      fromBlock: null,
      toBlock: null,
      requests: 0,
      logs: 0,
      stored: 0,
      unchanged: 0,
      lastBlock: cursor,
    };
    for (let from = first; from <= safeBlock; from += blockRange) {
      // stop() lets the loop finish the range in hand, not a long catch-up.
      if (interruptible && this.#stopping) break;
      const to = Math.min(from + blockRange - 1, safeBlock);
      const events = await this.#rpc(`read the staking logs of blocks ${from}-${to}`, () => fetchStakeEvents(this.#client, contract, from, to));
      const stored = await this.#repo.storeIndexed(contract, events, to, this.#clock());
      run.fromBlock ??= from;
      run.toBlock = to;
      run.requests += 1;
      run.logs += events.length;
      run.stored += stored;
      run.unchanged += events.length - stored;
      run.lastBlock = Math.max(run.lastBlock ?? to, to);
    }
    return run;
  }

  async #rpc<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const where = rpcEndpointName(this.#options.rpcUrl);
      const problem = isUnreachable(error) ? rpcFailureReason(error) : `it answered with an error: ${rpcFailureReason(error)}`;
      throw new AppError('upstream_unavailable', `Could not ${what} from the staking RPC endpoint ${where}: ${problem}.`);
    }
  }
}

type StakingIndexerRepo = Pick<StakeEventsRepository, 'cursor' | 'storeIndexed'>;
