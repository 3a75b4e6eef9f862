import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { PollingLoop } from '../../events/polling-loop.js';
import type { BatchRetentionRepository } from './batch-retention.repository.js';
import { deleteAllItems, discardUpload } from './batch-store.js';
import { utcDay } from './utc-days.js';

export interface BatchRetentionOptions {
  /** How long a batch is kept after it ended (BATCH_RETENTION_DAYS). */
  retentionMs: number;
  /** How often the sweep runs. */
  sweepEveryMs: number;
  /** An upload begun this long ago that never ended was abandoned (its process died). */
  abandonedUploadMs: number;
}

/** Hourly: a batch is deleted at most an hour after its retention ran out (it answers 404 from the moment it did). */
export const sweepEveryMs = 3_600_000;
// No upload takes an hour (100,000 addresses take seconds); one that old was abandoned.
export const abandonedUploadMs = 3_600_000;
// Batches looked up per query of a sweep.
const batchesPerLookup = 20;

export interface SweepCounts {
  batches: number;
  uploads: number;
  usageRows: number;
}

/**
 * Deletes what batch scoring no longer needs, on the batch worker's polling loop: batches that
 * ended more than the retention ago with their items and chunks, the items of uploads whose
 * process died before they ended, and daily usage rows of days before the retention window (only
 * today's row is read, so no quota is given back). Every delete is bounded
 * (batch-retention.repository) and the event loop is yielded to between them; a sweep stopped
 * halfway resumes at the next one.
 */
export class BatchRetention {
  readonly #repo: BatchRetentionRepository;
  readonly #options: BatchRetentionOptions;
  readonly #clock: () => number;
  readonly #loop: PollingLoop;

  constructor(repo: BatchRetentionRepository, options: BatchRetentionOptions, onError: (error: unknown) => void, clock: () => number = Date.now) {
    this.#repo = repo;
    this.#options = options;
    this.#clock = clock;
    this.#loop = new PollingLoop(async () => {
      await this.sweep(() => this.#loop.running);
    }, { pollMs: options.sweepEveryMs, timer: 'restart', onError });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** One sweep now; `keepGoing` is asked between steps (false: stop, the rest waits for the next sweep). */
  async sweep(keepGoing: () => boolean = () => true): Promise<SweepCounts> {
    const now = this.#clock();
    const counts: SweepCounts = { batches: 0, uploads: 0, usageRows: 0 };
    for (let more = true; more && keepGoing(); ) {
      const ids = await this.#repo.endedBefore(now - this.#options.retentionMs, batchesPerLookup);
      for (const id of ids) {
        if (!(await deleteAllItems(this.#repo, id, keepGoing))) return counts;
        await this.#repo.deleteBatch(id);
        counts.batches++;
      }
      more = ids.length === batchesPerLookup;
    }
    for (let more = true; more && keepGoing(); ) {
      const ids = await this.#repo.abandonedUploads(now - this.#options.abandonedUploadMs, batchesPerLookup);
      for (const id of ids) {
        if (!(await discardUpload(this.#repo, id, keepGoing))) return counts;
        counts.uploads++;
      }
      more = ids.length === batchesPerLookup;
    }
    // The retention is at least a day: the cut-off day is before today, whose row the quota reads.
    const firstKeptDay = utcDay(now - this.#options.retentionMs);
    while (keepGoing()) {
      const deleted = await this.#repo.deleteUsageOfOneDayBefore(firstKeptDay);
      if (deleted === 0) break;
      counts.usageRows += deleted;
      await yieldToEventLoop();
    }
    return counts;
  }
}
