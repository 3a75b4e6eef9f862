import type { ScoreReadCache } from './score-read-cache.js';
import { singleScoreJson } from './score-json.js';
import { type EventEmitter, setMaxListeners } from 'node:events';
import { AppError, shuttingDownError } from '../../errors.js';
import { isScorerId } from '../accounts/accounts.service.js';
import type { ThresholdScoreCheck } from '../scorers/engine.js';
import type { ScoringJobRow, ScoringJobsRepository } from '../jobs/scoring-jobs.repository.js';
import type { InlineScoring } from '../jobs/inline-scoring.js';
import type { JobSettled, ScoringWorker } from '../jobs/scoring-worker.js';
import type { ScoreRow, ScoresRepository } from './scores.repository.js';
import type { ScoreList, ScoreRecord } from './score-record.schema.js';
import { formatScoringTimestamp, parseTimestampFilter } from '../timestamps.js';

export type { ScoreList, ScoreRecord } from './score-record.schema.js';

export function toScoreRecord(row: ScoreRow): ScoreRecord {
  return {
    address: row.address,
    score: row.score,
    status: row.status,
    last_score_timestamp: formatScoringTimestamp(row.last_score_timestamp),
    expiration_date: row.expiration_date === null ? null : formatScoringTimestamp(Number(row.expiration_date)),
    evidence: row.evidence === null ? null : (JSON.parse(row.evidence) as ThresholdScoreCheck),
    error: row.error,
    // Settled rows always answer an object, whatever an older row holds.
    stamp_scores: row.stamp_scores !== null ? (JSON.parse(row.stamp_scores) as Record<string, string>) : row.status === 'PROCESSING' ? null : {},
  };
}

/** What `enqueue` wrote to the score row: the record as it stands until the job settles. */
function processingRecord(address: string, at: number): ScoreRecord {
  return {
    address,
    score: null,
    status: 'PROCESSING',
    last_score_timestamp: formatScoringTimestamp(at),
    expiration_date: null,
    evidence: null,
    error: null,
    stamp_scores: null,
  };
}

/** A submission waiting for its job: what was heard since it last looked at its row. */
interface Waiter {
  settled: boolean;
  startedHere: boolean;
  wake: (() => void) | null;
}

export interface ScoreListQuery {
  last_score_timestamp_gt?: string;
  last_score_timestamp_gte?: string;
  address?: string;
  limit: number;
  offset: number;
}

function timestampFilter(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseTimestampFilter(raw);
  if (ms === null) throw new AppError('invalid_timestamp', `${name} must be an ISO 8601 date-time such as 2026-03-01T12:00:00+00:00.`);
  return ms;
}

export interface ScoreServiceOptions {
  /** How long a submission waits for its score before answering PROCESSING. */
  submitWaitMs: number;
  /**
   * How often a waiting submission looks at the database while no notice of its job can be
   * counted on: on SQLite (or PostgreSQL without LISTEN) until the local worker has started the job.
   */
  waitPollMs: number;
  /**
   * True when a job settled by any process is announced here (PostgreSQL LISTEN): a waiting
   * submission then never polls, it reads its row on the notice or at its deadline.
   */
  noticesFromEveryProcess?: () => boolean;
  /** Scores a submission in this process when its worker has a free slot (one write, no job). */
  inline?: InlineScoring;
  /** An inline scoring appended a score event (the webhook worker looks at once, as after a job). */
  eventAppended?: () => void;
  /**
   * Emits `settled` ({scorerId, address}) when a job settles in any process, so a waiting
   * submission answers at once (default: the local worker's own events).
   */
  settledJobs?: EventEmitter;
  /** Tells the workers of every process that a job was queued (default: the local worker only). */
  announceJob?: () => void;
  /** `Retry-After` of the 503 a submission gets once the service is closing. */
  retryAfterSeconds?: number;
  /** The single-score read's body cache (see score-read-cache.ts). */
  readCache?: ScoreReadCache;
  /** Announces written score rows to every process (the bus); awaited before the write is acknowledged. */
  scoresWritten?: (scorerId: number, addresses: readonly string[]) => Promise<void>;
}

export function scoreService(
  scores: ScoresRepository,
  jobs: ScoringJobsRepository,
  worker: ScoringWorker | null,
  options: ScoreServiceOptions,
  clock: () => number = Date.now,
) {
  // A submission keeps running when its client disconnects, so the HTTP server's close does not
  // wait for it; shutdown ends the waits (answering what was read last) and waits for them instead.
  const shutdown = new AbortController();
  // Every waiting submission listens for the abort: any number may wait at once.
  setMaxListeners(0, shutdown.signal);
  const inFlight = new Set<Promise<unknown>>();
  // Set by close(): the database is about to close, so a submission made now could not be recorded.
  // The drain alone refuses nothing: a submission that reaches the service during it is a request
  // the HTTP server took before it began to drain (its head had arrived; later ones are refused
  // there), and it is recorded and answered.
  let closed = false;

  // The submissions waiting for their job, by (scorer, address): one listener per emitter for all
  // of them, so that a burst of announcements for other jobs costs a map look-up each.
  const waiters = new Map<string, Set<Waiter>>();
  const keyOf = (scorerId: number, address: string) => `${scorerId}/${address}`;
  const settledJobs = options.settledJobs ?? worker;
  settledJobs?.on('settled', (settled: Pick<JobSettled, 'scorerId' | 'address'>) => {
    for (const waiter of waiters.get(keyOf(settled.scorerId, settled.address)) ?? []) {
      waiter.settled = true;
      // The run that was started here is over; if it left the job queued, it may run elsewhere next.
      waiter.startedHere = false;
      waiter.wake?.();
    }
  });
  // The local worker took the job: its settled notice will come, so no poll is needed.
  worker?.on('started', (job: ScoringJobRow) => {
    for (const waiter of waiters.get(keyOf(job.scorer_id, job.address)) ?? []) waiter.startedHere = true;
  });

  function watch(scorerId: number, address: string): Waiter & { close(): void } {
    const key = keyOf(scorerId, address);
    let set = waiters.get(key);
    if (!set) waiters.set(key, (set = new Set()));
    const waiter: Waiter & { close(): void } = {
      settled: false,
      startedHere: false,
      wake: null,
      close() {
        set.delete(waiter);
        if (set.size === 0 && waiters.get(key) === set) waiters.delete(key);
      },
    };
    set.add(waiter);
    return waiter;
  }

  /**
   * Reads the row until it settles, the deadline passes or shutdown begins. Between reads it
   * waits for the job's settled notice; it looks again without one only while no notice can be
   * counted on (see waitPollMs), never when the local worker runs the job or every process's
   * notices arrive here. A notice lost all the same (LISTEN reconnecting) delays the answer to
   * the deadline, when the row is read once more.
   */
  async function waitForScore(waiter: Waiter, scorerId: number, address: string, deadline: number): Promise<ScoreRow | undefined> {
    const everyProcess = options.noticesFromEveryProcess?.() ?? false;
    for (;;) {
      // Cleared before the read: a notice that arrives during it is not lost.
      waiter.settled = false;
      const row = await scores.find(scorerId, address);
      const remaining = deadline - clock();
      if (!row || row.status !== 'PROCESSING' || remaining <= 0 || shutdown.signal.aborted) return row;
      if (waiter.settled) continue;
      await new Promise<void>((resolve) => {
        const deadlineTimer = setTimeout(() => done(), remaining);
        let pollTimer: NodeJS.Timeout | null = null;
        const poll = () => {
          pollTimer = null;
          if (waiter.startedHere) return;
          done();
        };
        if (!everyProcess && !waiter.startedHere) pollTimer = setTimeout(poll, Math.min(remaining, options.waitPollMs));
        function done() {
          clearTimeout(deadlineTimer);
          if (pollTimer) clearTimeout(pollTimer);
          waiter.wake = null;
          shutdown.signal.removeEventListener('abort', done);
          resolve();
        }
        waiter.wake = done;
        shutdown.signal.addEventListener('abort', done, { once: true });
      });
      if (shutdown.signal.aborted) return row;
    }
  }

  /** Records the submission as a job and waits for its score (no free slot here, or joining a job). */
  async function queueAndWait(scorerId: number, address: string, start: number, deadline: number, waiter: Waiter, joined: boolean): Promise<ScoreRecord> {
    if (!joined) {
      // A failure here (the database unavailable) means nothing was recorded: the caller is
      // told so (503) and submits again.
      await jobs.enqueue(scorerId, address, start);
    }
    // The row is PROCESSING now: no process may keep answering the finished record it had.
    await options.scoresWritten?.(scorerId, [address]);
    if (options.announceJob) options.announceJob();
    else worker?.notify();
    let row: ScoreRow | undefined;
    try {
      row = await waitForScore(waiter, scorerId, address, deadline);
    } catch {
      // The submission is recorded and its job queued; only reading the score failed (the
      // database went away meanwhile). Refusing now would tell the client it was not recorded.
      return processingRecord(address, start);
    }
    if (!row) throw new AppError('internal_error', 'The submission was not recorded.');
    return toScoreRecord(row);
  }

  return {
    /** Records the submission durably, then waits a little for the score. */
    async submit(scorerId: number, address: string): Promise<ScoreRecord> {
      if (closed) throw shuttingDownError(options.retryAfterSeconds);
      const work = (async () => {
        const start = clock();
        // Listening before anything is written: the job's notices cannot be missed.
        const waiter = watch(scorerId, address);
        try {
          // A zero budget asks for PROCESSING at once: scoring is left to the queue.
          const inline = options.submitWaitMs > 0 ? options.inline?.tryScore(scorerId, address) : null;
          if (inline) {
            // A database fault is thrown from here: nothing was recorded (503).
            const outcome = await inline;
            if (outcome.kind === 'recorded') {
              await options.scoresWritten?.(scorerId, [address]);
              if (outcome.eventAppended) options.eventAppended?.();
              return toScoreRecord(outcome.row);
            }
            if (outcome.kind === 'queued') return await queueAndWait(scorerId, address, outcome.at, start + options.submitWaitMs, waiter, true);
          }
          return await queueAndWait(scorerId, address, start, start + options.submitWaitMs, waiter, false);
        } finally {
          waiter.close();
        }
      })();
      inFlight.add(work);
      try {
        return await work;
      } finally {
        inFlight.delete(work);
      }
    },

    /**
     * Ends the waits of submissions in progress and waits for them to finish (shutdown). One that
     * comes after is still taken, and answered without a wait: inline scoring answers it at once
     * when a slot is free, otherwise it is queued and answered PROCESSING.
     */
    async drain(): Promise<void> {
      shutdown.abort();
      await Promise.allSettled([...inFlight]);
    },

    /** Refuses submissions from now on (503 `shutting_down`) and drains: before the database closes. */
    async close(): Promise<void> {
      closed = true;
      shutdown.abort();
      await Promise.allSettled([...inFlight]);
    },

    /** The row of the single-score read (the route writes its body with singleScoreJson). */
    async getScore(scorerId: number, accountId: number, address: string): Promise<ScoreRow> {
      const found = isScorerId(scorerId) ? await scores.findForAccount(scorerId, accountId, address) : { scorerFound: false, score: undefined };
      if (!found.scorerFound) throw new AppError('scorer_not_found', `There is no scorer ${scorerId} for this API key.`);
      if (!found.score) throw new AppError('not_submitted', `The address ${address} has not been submitted to scorer ${scorerId}.`);
      return found.score;
    },

    /**
     * The single-score read's JSON body: from the read cache when it holds this record (at once,
     * not a promise: a cache hit is most reads, and a promise and its microtask cost a tenth of
     * one), else read and kept.
     */
    scoreBody(scorerId: number, accountId: number, address: string): string | Promise<string> {
      const cache = options.readCache;
      const hit = cache?.lookup(scorerId, address, accountId);
      if (hit) return hit;
      const generation = cache?.generation ?? 0;
      return this.getScore(scorerId, accountId, address).then((row) =>
        cache ? cache.store(generation, accountId, row) : singleScoreJson(row),
      );
    },

    async listScores(scorerId: number, query: ScoreListQuery): Promise<ScoreList> {
      const { rows, count } = await scores.list(scorerId, {
        after: timestampFilter('last_score_timestamp_gt', query.last_score_timestamp_gt),
        atOrAfter: timestampFilter('last_score_timestamp_gte', query.last_score_timestamp_gte),
        address: query.address?.toLowerCase(),
        limit: query.limit,
        offset: query.offset,
      });
      return { items: rows.map(toScoreRecord), count };
    },
  };
}

export type ScoreService = ReturnType<typeof scoreService>;
