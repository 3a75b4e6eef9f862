import { isDatabaseUnavailable } from '../../db/availability.js';
import { NullifierTaken } from '../records/score-records.repository.js';
import type { ScoreRow } from '../records/score-records.repository.js';
import type { ScoreVersion, ScoringJobsRepository } from './scoring-jobs.repository.js';
import type { ScoringOutcome } from '../records/score-outcome.js';
import type { ScoringWorker } from './scoring-worker.js';

type ScoreFn = (scorerId: number, address: string, now: number) => Promise<ScoringOutcome>;

/** The worker's `inlineScored` event: a submission scored and recorded in one of its slots. */
export interface InlineScored {
  scorerId: number;
  address: string;
  /** From the start of scoring to the commit. */
  durationMs: number;
}

/**
 * What an inline scoring came to: `recorded` (the score row as written, and whether a score
 * event was appended); `queued` (a job of the address was queued or running already and the
 * submission joined it, the row is PROCESSING since `at`); `unscored` (scoring failed or kept
 * losing a nullifier race: nothing was written, the submission goes to the queue, which retries
 * with backoff).
 */
export type InlineOutcome =
  | { kind: 'recorded'; row: ScoreRow; eventAppended: boolean }
  | { kind: 'queued'; at: number }
  | { kind: 'unscored' };

// As v2 synchronous scoring: another address taking a counted nullifier between scoring and
// recording is rare, and a job takes over after this many.
const MAX_ATTEMPTS = 3;

/**
 * Scores a submission in the submitting process when its worker has a free slot: the same
 * scoring a job runs (stored data only), written once through `recordInline` (one write
 * transaction, no job row). A database fault is thrown (nothing recorded: the submission is
 * refused with 503); any other failure leaves the submission to the durable queue.
 */
export function inlineScoring(worker: ScoringWorker, jobs: ScoringJobsRepository, score: ScoreFn, clock: () => number = Date.now) {
  async function scoreAndRecord(scorerId: number, address: string): Promise<InlineOutcome> {
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      let outcome: ScoringOutcome;
      let readOver: ScoreVersion;
      try {
        readOver = await jobs.scoreVersion(scorerId, address);
        outcome = await score(scorerId, address, clock());
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error;
        worker.emit('failure', error);
        return { kind: 'unscored' };
      }
      const now = clock();
      try {
        const recording = await jobs.recordInline(scorerId, address, now, outcome, readOver);
        if (recording.kind === 'queued') return { kind: 'queued', at: now };
        worker.emit('inlineScored', { scorerId, address, durationMs: performance.now() - started } satisfies InlineScored);
        return { kind: 'recorded', row: recording.recorded.row, eventAppended: recording.recorded.appendedEventId !== null };
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error;
        if (!(error instanceof NullifierTaken)) worker.emit('failure', error);
        if (!(error instanceof NullifierTaken) || attempt >= MAX_ATTEMPTS) return { kind: 'unscored' };
      }
    }
  }

  return {
    /** Scores and records now in a free slot of the worker; null (nothing done) when it has none. */
    tryScore(scorerId: number, address: string): Promise<InlineOutcome> | null {
      return worker.runInline(() => scoreAndRecord(scorerId, address));
    },
  };
}

export type InlineScoring = ReturnType<typeof inlineScoring>;
