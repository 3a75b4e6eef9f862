import { once } from 'node:events';
import { AppError } from '../errors.js';
import { isScorerId } from './accounts.js';
import type { ScoreStatus } from '../db/tables.js';
import type { ThresholdScoreCheck } from './engine.js';
import type { ScoringJobsRepository } from './scoring-jobs.repository.js';
import type { JobSettled, ScoringWorker } from './scoring-worker.js';
import type { ScoreRow, ScoresRepository } from './scores.repository.js';
import { formatScoringTimestamp, parseTimestampFilter } from './timestamps.js';

/** The score record of the interface, exactly its six fields. */
export interface ScoreRecord {
  address: string;
  score: string | null;
  status: ScoreStatus;
  last_score_timestamp: string;
  evidence: ThresholdScoreCheck | null;
  error: string | null;
}

export interface ScoreList {
  items: ScoreRecord[];
  count: number;
}

export function toScoreRecord(row: ScoreRow): ScoreRecord {
  return {
    address: row.address,
    score: row.score,
    status: row.status,
    last_score_timestamp: formatScoringTimestamp(row.last_score_timestamp),
    evidence: row.evidence === null ? null : (JSON.parse(row.evidence) as ThresholdScoreCheck),
    error: row.error,
  };
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
  /** How often a waiting submission looks at the database when no local worker reports. */
  waitPollMs: number;
  /** Tells the workers of every process that a job was queued (default: the local worker only). */
  announceJob?: () => void;
}

export function scoreService(
  scores: ScoresRepository,
  jobs: ScoringJobsRepository,
  worker: ScoringWorker | null,
  options: ScoreServiceOptions,
  clock: () => number = Date.now,
) {
  async function waitForScore(scorerId: number, address: string, deadline: number): Promise<ScoreRow | undefined> {
    for (;;) {
      const row = await scores.find(scorerId, address);
      const remaining = deadline - clock();
      if (!row || row.status !== 'PROCESSING' || remaining <= 0) return row;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), Math.min(remaining, options.waitPollMs));
      try {
        // A local worker says when this job settles; otherwise the timer wakes the next look.
        if (worker) {
          while (true) {
            const [settled] = (await once(worker, 'settled', { signal: controller.signal })) as [JobSettled];
            if (settled.scorerId === scorerId && settled.address === address) break;
          }
        } else {
          await once(controller.signal, 'abort');
        }
      } catch {
        // Aborted by the timer: look again.
      } finally {
        clearTimeout(timer);
      }
    }
  }

  return {
    /** Records the submission durably, then waits a little for the score. */
    async submit(scorerId: number, address: string): Promise<ScoreRecord> {
      const start = clock();
      await jobs.enqueue(scorerId, address, start);
      if (options.announceJob) options.announceJob();
      else worker?.notify();
      const row = await waitForScore(scorerId, address, start + options.submitWaitMs);
      if (!row) throw new AppError('internal_error', 'The submission was not recorded.');
      return toScoreRecord(row);
    },

    async getScore(scorerId: number, accountId: number, address: string): Promise<ScoreList> {
      const found = isScorerId(scorerId) ? await scores.findForAccount(scorerId, accountId, address) : { scorerFound: false, score: undefined };
      if (!found.scorerFound) throw new AppError('scorer_not_found', `There is no scorer ${scorerId} for this API key.`);
      if (!found.score) throw new AppError('not_submitted', `The address ${address} has not been submitted to scorer ${scorerId}.`);
      return { items: [toScoreRecord(found.score)], count: 1 };
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
