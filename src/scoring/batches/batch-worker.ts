import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { PollingLoop } from '../../events/polling-loop.js';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable } from '../../db/availability.js';
import type { Db } from '../../db/connection.js';
import type { V2Score } from '../scores/v2-score.schema.js';
import { v2ScoreJson } from '../scores/v2-score-json.js';
import type { BatchRetention } from './batch-retention.js';
import { type BatchChunkRow, type BatchesRepository, ChunkLeaseLost } from './batches.repository.js';
import type { BatchRow } from './batches.repository.js';

/**
 * Scores one address now for the batch (v2 scoring: the same computation and write path as every
 * other scoring). `withinTransaction` runs inside the transaction that writes the score, so the
 * batch item is finished atomically with it; `written: false` means nothing changed and nothing
 * was written (the callback did not run), and the worker finishes the item in a write of its own.
 */
export type ScoreAddress = (
  scorerId: number,
  accountId: number,
  address: string,
  withinTransaction?: (trx: Db) => Promise<void>,
) => Promise<{ score: V2Score; written: boolean }>;

/** What scoreChunk answers for one address: its score row, or the error that sends it to ScoreAddress. */
export type ChunkAnswer = { row: Parameters<typeof v2ScoreJson>[0] } | { error: Error };

/**
 * Scores many addresses of a batch together (v2ScoreService.scoreChunk): the outcome of scoring
 * them one after the other, with one read of each kind and one write transaction, in which
 * `withinTransaction` finishes their items. Throws when the chunk cannot be scored together
 * (nothing written): its addresses are then scored one by one.
 */
export type ScoreChunk = (
  scorerId: number,
  accountId: number,
  addresses: readonly string[],
  withinTransaction: (trx: Db, answers: ReadonlyMap<string, ChunkAnswer>) => Promise<void>,
) => Promise<ReadonlyMap<string, ChunkAnswer>>;

/** A batch's addresses scored together per step: a step's reads and its write transaction stay short. */
const STEP_ADDRESSES = 100;

export interface BatchWorkerOptions {
  /** Chunks worked on at the same time by this process (0: none). */
  concurrency: number;
  /** A chunk's lease; every finished item renews it. */
  leaseMs: number;
  /** Idle look-for-work interval, and the back-off while submissions are due. */
  pollMs: number;
}

export type ItemScored = { batchId: string; position: number; outcome: 'done' | 'failed' };

// While a chunk runs, the submission queue is looked at every this many addresses.
const priorityCheckEvery = 20;

/**
 * Works off batch chunks at a lower priority than submissions: a chunk is claimed only when no
 * submission's scoring job is due, a running chunk pauses while one is, and the event loop is
 * yielded to between addresses so that HTTP requests of the same process keep being served.
 * Emits `scored` (ItemScored) per item, `batchDone` (batch id) and `failure` (Error). Runs the
 * retention sweep (`retention`) on a loop of its own wherever it runs.
 */
export class BatchWorker extends EventEmitter {
  readonly owner = `${hostname()}:${process.pid}:batch:${randomBytes(4).toString('hex')}`;
  readonly #repo: BatchesRepository;
  readonly #score: ScoreAddress;
  readonly #scoreChunk: ScoreChunk | null;
  readonly #options: BatchWorkerOptions;
  readonly #clock: () => number;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #loop: PollingLoop;
  /** Deletes batches past their retention and abandoned uploads. */
  readonly retention: BatchRetention | null;

  constructor(
    repo: BatchesRepository,
    score: { one: ScoreAddress; chunk?: ScoreChunk },
    options: BatchWorkerOptions,
    clock: () => number = Date.now,
    retention: BatchRetention | null = null,
  ) {
    super();
    this.retention = retention;
    this.setMaxListeners(0);
    this.#repo = repo;
    this.#score = score.one;
    this.#scoreChunk = score.chunk ?? null;
    this.#options = options;
    this.#clock = clock;
    this.#loop = new PollingLoop(() => this.#pass(), {
      pollMs: options.pollMs,
      timer: 'restart',
      onError: (error) => this.emit('failure', error),
    });
  }

  get running(): boolean {
    return this.#loop.running;
  }

  start(): void {
    if (this.#options.concurrency === 0) return;
    this.#loop.start();
    this.retention?.start();
  }

  /** Looks for work now (a batch was created in this process). */
  notify(): void {
    this.#loop.wake();
  }

  /** Stops claiming; chunks in hand stop after their current address and are released for others. */
  async stop(): Promise<void> {
    await Promise.all([this.#loop.stop(), this.retention?.stop()]);
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Resolves once no chunk is in hand and none is claimable (the CLI's in-process run). */
  async idle(): Promise<void> {
    while (this.#loop.pumping || this.#inFlight.size > 0) {
      await Promise.allSettled([this.#loop.pumping, ...this.#inFlight]);
    }
  }

  /** One pass: claims chunks while slots are free (PollingLoop runs it again if woken meanwhile). */
  async #pass(): Promise<void> {
    while (this.#loop.running && this.#inFlight.size < this.#options.concurrency) {
      await yieldToEventLoop();
      if (!this.#loop.running) break;
      // Submissions first: with one due, batches wait for the next poll.
      if (await this.#repo.submissionDue(this.#clock())) break;
      const chunk = await this.#repo.claimChunk(this.owner, this.#clock(), this.#options.leaseMs);
      if (!chunk) break;
      const run = this.#runChunk(chunk)
        .catch((error: unknown) => {
          this.emit('failure', error);
        })
        .finally(() => {
          this.#inFlight.delete(run);
          this.notify();
        });
      this.#inFlight.add(run);
    }
  }


  async #runChunk(chunk: BatchChunkRow): Promise<void> {
    const batch = await this.#repo.batchOf(chunk.batch_id);
    if (!batch) return;
    // At most one chunk of addresses is held: the chunk size bounds this process's batch memory.
    const items = await this.#repo.pendingItems(chunk);
    const step = this.#scoreChunk ? STEP_ADDRESSES : priorityCheckEvery;
    for (let first = 0; first < items.length; first += step) {
      await yieldToEventLoop();
      if (!this.#loop.running) {
        await this.#repo.releaseChunk(chunk, this.owner, this.#clock());
        return;
      }
      if (first > 0) await this.#giveWayToSubmissions();
      const result = await this.#scoreStep(chunk, batch, items.slice(first, first + step));
      if (result === 'stop') return;
    }
    const finished = await this.#repo.finishChunk(chunk, this.owner, this.#clock());
    if (finished === 'batch-done') this.emit('batchDone', chunk.batch_id);
  }

  /** A step's items: scored together when it can be, else (or for an address that failed together) one by one. */
  async #scoreStep(chunk: BatchChunkRow, batch: BatchRow, items: readonly { position: number; address: string }[]): Promise<'next' | 'stop'> {
    let alone = items;
    if (this.#scoreChunk) {
      try {
        const answers = await this.#scoreChunk(batch.scorer_id, batch.account_id, items.map((item) => item.address), async (trx, answers) => {
          const finished = items.flatMap((item) => {
            const answer = answers.get(item.address)!;
            return 'error' in answer ? [] : [{ position: item.position, outcome: { state: 'done' as const, result: v2ScoreJson(answer.row), error: null } }];
          });
          await this.#repo.finishItems(trx, chunk, this.owner, this.#clock(), this.#options.leaseMs, finished);
        });
        alone = items.filter((item) => 'error' in answers.get(item.address)!);
        for (const item of items) if (!alone.includes(item)) this.emit('scored', { batchId: chunk.batch_id, position: item.position, outcome: 'done' } satisfies ItemScored);
      } catch (error) {
        if (error instanceof ChunkLeaseLost) return 'stop';
        if (isDatabaseUnavailable(error)) return this.#backOff(chunk, error);
        // Not scorable together (a hold taken meanwhile, the scorer gone): one by one, as each item's own fate.
      }
    }
    for (const item of alone) {
      await yieldToEventLoop();
      if (!this.#loop.running) {
        await this.#repo.releaseChunk(chunk, this.owner, this.#clock());
        return 'stop';
      }
      if ((await this.#scoreItem(chunk, batch.scorer_id, batch.account_id, item.position, item.address)) === 'stop') return 'stop';
    }
    return 'next';
  }

  /** The database failed, not the addresses: the chunk is taken again once the back-off passed. */
  async #backOff(chunk: BatchChunkRow, error: unknown): Promise<'stop'> {
    this.emit('failure', error);
    await this.#repo.releaseChunk(chunk, this.owner, this.#clock() + this.#options.pollMs).catch(() => {});
    return 'stop';
  }

  /** Waits while a submission is due, for at most a third of the lease (the lease must not run out). */
  async #giveWayToSubmissions(): Promise<void> {
    const until = this.#clock() + this.#options.leaseMs / 3;
    while (this.#loop.running && this.#clock() < until && (await this.#repo.submissionDue(this.#clock()))) {
      await sleep(Math.min(20, this.#options.pollMs));
    }
  }

  async #scoreItem(chunk: BatchChunkRow, scorerId: number, accountId: number, position: number, address: string): Promise<'next' | 'stop'> {
    const { leaseMs } = this.#options;
    try {
      const scored = await this.#score(scorerId, accountId, address, async (trx) => {
        // Runs after the score row was written, in its transaction: the result is that row.
        const result = v2ScoreJson(await this.#repo.scoreRowIn(trx, scorerId, address));
        await this.#repo.finishItem(trx, chunk, this.owner, this.#clock(), leaseMs, position, { state: 'done', result, error: null });
      });
      if (!scored.written) {
        const result = JSON.stringify(scored.score);
        await this.#repo.finishItemAlone(chunk, this.owner, this.#clock(), leaseMs, position, { state: 'done', result, error: null });
      }
      this.emit('scored', { batchId: chunk.batch_id, position, outcome: 'done' } satisfies ItemScored);
      return 'next';
    } catch (error) {
      if (error instanceof ChunkLeaseLost) return 'stop';
      if (isDatabaseUnavailable(error)) return this.#backOff(chunk, error);
      const message = (error as Error)?.name === 'AppError' ? (error as Error).message : 'Scoring this address failed because of an internal error.';
      try {
        await this.#repo.finishItemAlone(chunk, this.owner, this.#clock(), leaseMs, position, { state: 'failed', result: null, error: message });
      } catch (finishError) {
        if (finishError instanceof ChunkLeaseLost) return 'stop';
        throw finishError;
      }
      this.emit('failure', error);
      this.emit('scored', { batchId: chunk.batch_id, position, outcome: 'failed' } satisfies ItemScored);
      return 'next';
    }
  }
}
