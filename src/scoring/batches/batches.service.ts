import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../errors.js';
import type { Caller } from '../accounts/api-keys.service.js';
import type { AccountService } from '../accounts/accounts.service.js';
import { formatScoringTimestamp } from '../timestamps.js';
import { addressesFromJson } from './address-list.js';
import { type BodyFormat, readAddresses } from './address-stream.js';
import { csvHeader, renderResult, type ResultFormat } from './batch-results.js';
import type { BatchRetentionRepository } from './batch-retention.repository.js';
import { storeBatch } from './batch-store.js';
import type { BatchUploadsRepository } from './batch-uploads.repository.js';
import type { ScoreAddress } from './batch-worker.js';
import { type BatchRow, type BatchesRepository, QuotaExceeded } from './batches.repository.js';
import { PackedAddresses } from './packed-addresses.js';
import { secondsToNextUtcDay, utcDay } from './utc-days.js';
import type { BatchView } from './batch.schema.js';
import type { V2Score } from '../scores/v2-score.schema.js';

export interface BatchServiceOptions {
  syncMaxAddresses: number;
  maxAddresses: number;
  /** Most bytes of an uploaded body (the route does not buffer it, so the service counts). */
  bodyLimitBytes: number;
  chunkSize: number;
  /** How long a batch is kept after it ended (DONE or CANCELLED); past it, it is answered 404 and deleted. */
  retentionMs: number;
  /** Addresses per UTC day for accounts of tier 1..4 (the tier of an account: its highest live key). */
  dailyAddresses: readonly [number, number, number, number];
  /** How long a results stream of a running batch waits for its next row before it ends. */
  resultsWaitMs: number;
  /** How often a waiting results stream looks again. */
  resultsPollMs: number;
}

export interface BatchServiceDeps {
  repo: BatchesRepository;
  uploads: BatchUploadsRepository;
  retention: BatchRetentionRepository;
  accounts: AccountService;
  scoreAddress: ScoreAddress;
  /** Wakes this process's batch worker. */
  announce: () => void;
}

/** A batch from the command line: parsed JSON, or CSV text. */
export type BatchInput = { addresses: readonly unknown[] } | string;

/** The body of the asynchronous batch route, as it arrives (never buffered whole). */
export interface BatchUpload {
  format: BodyFormat;
  body: AsyncIterable<Buffer | string> | Iterable<Buffer | string>;
}

/** Whose batches a request may see: the API key's account (or, from the CLI, the scorer's). */
export type Owner = { accountId: number | null };

/** The operator (the command line): every batch. */
export const operator: Owner = { accountId: null };

/** `batches.key_id` of batches the operator created from the command line. */
export const operatorKeyId = 0;

const pageSize = 500;

export { secondsToNextUtcDay, utcDay };

export function toBatchView(row: BatchRow): BatchView {
  return {
    id: row.id,
    scorer_id: row.scorer_id,
    status: row.status,
    total: row.total,
    done: row.done,
    failed: row.failed,
    created_at: formatScoringTimestamp(row.created_at),
    finished_at: row.finished_at === null ? null : formatScoringTimestamp(row.finished_at),
  };
}

export function batchService(deps: BatchServiceDeps, options: BatchServiceOptions, clock: () => number = Date.now) {
  const { repo } = deps;

  function quotaOf(caller: Caller): number {
    // The account's quota, shared by its keys: a key minted for it starts no fresh one.
    return options.dailyAddresses[caller.accountTier - 1] ?? options.dailyAddresses[0];
  }

  /**
   * 429 with Retry-After to the next UTC day. `asked`: the batch's size, or null when nothing is
   * left at all; `partOfBody`: the body was still being read, so `asked` is the count so far.
   */
  function quotaExceeded(caller: Caller, used: number, asked: number | null, partOfBody = false): AppError {
    const now = clock();
    const left = Math.max(0, quotaOf(caller) - used);
    const detail =
      asked === null
        ? `This account has queued its ${quotaOf(caller)} batch addresses for today (UTC), across all its API keys; the quota renews at midnight UTC.`
        : `This batch of ${partOfBody ? 'more than ' + (asked - 1) : asked} addresses exceeds the ${left} addresses left of this account's daily batch quota (${quotaOf(caller)}); the quota renews at midnight UTC.`;
    return new AppError('batch_quota_exceeded', detail, { 'retry-after': String(secondsToNextUtcDay(now)) });
  }

  /** The caller's batch addresses queued today (UTC), against which the daily quota is checked. */
  async function usedToday(caller: Caller): Promise<number> {
    return repo.usage(caller.accountId, utcDay(clock()));
  }

  /** A batch that ended longer than the retention ago is gone, whether or not the worker deleted it yet. */
  function expired(row: BatchRow): boolean {
    return row.finished_at !== null && row.finished_at < clock() - options.retentionMs;
  }

  async function batchOfAccount(accountId: number | null, id: string): Promise<BatchRow> {
    const row = await repo.findForAccount(id, accountId);
    if (!row || expired(row)) throw new AppError('batch_not_found', `There is no batch ${id} for this API key.`);
    return row;
  }

  return {
    /**
     * The checks that need no body, run before it is read: the scorer is the caller's and the
     * account has quota left today.
     */
    async checkBeforeBody(caller: Caller, scorerId: number): Promise<void> {
      await deps.accounts.scorerOfAccount(scorerId, caller.accountId);
      const used = await usedToday(caller);
      if (used >= quotaOf(caller)) throw quotaExceeded(caller, used, null);
    },

    /**
     * Reads the body as it arrives, checking each address as it completes: the first bad one, the
     * one past BATCH_MAX_ADDRESSES or the one past what is left of today's quota ends the read
     * with its refusal, and nothing is written or spent. Then writes the batch (in steps when it
     * is large, visible only once whole) and wakes the workers.
     */
    async create(caller: Caller, scorerId: number, upload: BatchUpload): Promise<BatchView> {
      const scorer = await deps.accounts.scorerOfAccount(scorerId, caller.accountId);
      const used = await usedToday(caller);
      if (used >= quotaOf(caller)) throw quotaExceeded(caller, used, null);
      const addresses = await readAddresses(upload.body, upload.format, {
        max: options.maxAddresses,
        bodyLimitBytes: options.bodyLimitBytes,
        quota: { allowed: quotaOf(caller) - used, refusal: (count) => quotaExceeded(caller, used, count, true) },
      });
      try {
        return await write(scorer.id, caller.accountId, caller.keyId, quotaOf(caller), addresses);
      } catch (error) {
        if (error instanceof QuotaExceeded) throw quotaExceeded(caller, error.used, addresses.count);
        throw error;
      }
    },

    /**
     * A batch created by the operator (`stampgate batches run`) for the scorer's account: no API
     * key (key id 0) and no quota. Returns the view and the owning account.
     */
    async createAsOperator(scorerId: number, input: BatchInput): Promise<{ batch: BatchView; accountId: number }> {
      const scorer = await deps.accounts.getScorer(scorerId);
      const addresses =
        typeof input === 'string'
          ? await readAddresses([input], 'csv', { max: options.maxAddresses, bodyLimitBytes: Number.MAX_SAFE_INTEGER })
          : PackedAddresses.of(addressesFromJson(input.addresses, options.maxAddresses));
      const batch = await write(scorer.id, scorer.accountId, operatorKeyId, null, addresses);
      return { batch, accountId: scorer.accountId };
    },

    async get(owner: Owner, id: string): Promise<BatchView> {
      return toBatchView(await batchOfAccount(owner.accountId, id));
    },

    /** Cancels a batch that has not ended; an ended batch is answered as it is. */
    async cancel(owner: Owner, id: string): Promise<BatchView> {
      const row = await repo.cancel(id, owner.accountId, clock());
      if (!row || expired(row)) throw new AppError('batch_not_found', `There is no batch ${id} for this API key.`);
      return toBatchView(row);
    },

    /**
     * The results in position order from `offset` on, as text pieces of whole lines, read from
     * the database a page at a time: memory stays bounded by the page whatever the batch size.
     * A running batch is followed: the stream waits for the next address to finish, and ends
     * when every address is out, the batch is cancelled (its unscored addresses are skipped), or
     * nothing finished for `resultsWaitMs` (the client resumes with `offset` = lines received).
     * Checks ownership before the first byte, so refusals are ordinary error answers.
     */
    async results(owner: Owner, id: string, format: ResultFormat, offset: number, signal?: AbortSignal): Promise<AsyncIterable<string>> {
      const batch = await batchOfAccount(owner.accountId, id);
      return resultLines(batch, format, offset, signal);
    },

    /**
     * The synchronous batch: every address scored now, answered in input order; an address
     * listed twice is scored once and its object repeated.
     */
    async scoreMany(caller: Caller, scorerId: number, input: readonly unknown[]): Promise<V2Score[]> {
      const addresses = addressesFromJson(input, options.syncMaxAddresses);
      const scorer = await deps.accounts.scorerOfAccount(scorerId, caller.accountId);
      const scored = new Map<string, V2Score>();
      for (const address of addresses) {
        if (!scored.has(address)) scored.set(address, (await deps.scoreAddress(scorer.id, caller.accountId, address)).score);
      }
      return addresses.map((address) => scored.get(address)!);
    },
  };

  async function write(scorerId: number, accountId: number, keyId: number, dailyQuota: number | null, addresses: PackedAddresses): Promise<BatchView> {
    const now = clock();
    const row = await storeBatch(
      deps.uploads,
      deps.retention,
      { id: `bat_${randomBytes(12).toString('base64url')}`, accountId, keyId, scorerId, createdAt: now, day: utcDay(now), dailyQuota },
      addresses,
      options.chunkSize,
    );
    deps.announce();
    return toBatchView(row);
  }

  async function* resultLines(batch: BatchRow, format: ResultFormat, offset: number, signal?: AbortSignal): AsyncGenerator<string> {
    if (format === 'csv' && offset === 0) yield csvHeader;
    let next = offset;
    let lastProgress = clock();
    let cancelled = batch.status === 'CANCELLED';
    for (;;) {
      const rows = await repo.resultsPage(batch.id, next, pageSize);
      let text = '';
      let waiting = false;
      for (const row of rows) {
        if (row.state === 'pending') {
          if (!cancelled) {
            waiting = true;
            break;
          }
          next = row.position + 1;
          continue;
        }
        text += renderResult(row, format);
        next = row.position + 1;
      }
      if (text !== '') {
        lastProgress = clock();
        yield text;
      }
      if (!waiting) {
        if (rows.length < pageSize) return;
        continue;
      }
      const status = await repo.status(batch.id);
      if (status === 'CANCELLED') {
        cancelled = true;
        continue;
      }
      // A client that went away ends the wait at once (its stream is destroyed, never read again).
      if (clock() - lastProgress >= options.resultsWaitMs || signal?.aborted) return;
      await sleep(options.resultsPollMs);
    }
  }
}

export type BatchService = ReturnType<typeof batchService>;
