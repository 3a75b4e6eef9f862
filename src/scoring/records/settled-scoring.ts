import type { ScoresTable, ScoreStatus } from '../../db/tables/index.js';
import type { ScoringOutcome } from './score-outcome.js';

// What recording a settled scoring means, without the database: the columns a result writes, and
// whether it changed since the latest event (then an event is appended) or is an unchanged
// re-score (then only the untracked columns are refreshed).

type ScoreRow = ScoresTable;

/** A settled scoring: what the score row becomes and what the event log records. */
export type SettledScoring =
  | { status: 'DONE'; outcome: ScoringOutcome }
  /** `threshold` (5 dp) when the scorer's threshold is known, so the v2 error answer can show it. */
  | { status: 'ERROR'; error: string; threshold?: string | null };

/** What a score row tells of its latest event: the tracked columns and the event it points at. */
export type TrackedScoreRow = Pick<ScoreRow, 'status' | 'score' | 'passing' | 'threshold' | 'evidence' | 'error' | 'stamps' | 'event_id'>;

/** The columns a result is compared on with the latest event (spec v2.md "Score events"), as an event or a row holds them. */
export interface TrackedEvent {
  status: ScoreStatus;
  score?: string | null;
  passing?: number | null;
  threshold?: string | null;
  evidence?: string | null;
  error?: string | null;
  stamps?: string | null;
}

/** The score row as an inline scoring starts: handed back to `recordInline`, which writes only over this version. */
export interface ScoreVersion {
  text: string;
  row: (TrackedScoreRow & Pick<ScoresTable, 'last_score_timestamp' | 'raw_score' | 'stamp_scores' | 'expiration_date'>) | undefined;
}

/** A score row while its job runs: a new submission and a re-submission look the same. */
export function processingState(now: number) {
  return {
    status: 'PROCESSING' as const,
    score: null,
    evidence: null,
    error: null,
    last_score_timestamp: now,
    expiration_date: null,
    stamp_scores: null,
  };
}

/**
 * Another address took a nullifier the result counted on, between scoring and recording: the
 * transaction must roll back and the address be scored again.
 */
export class NullifierTaken extends Error {
  constructor() {
    super('a nullifier the score counted on was taken by another address');
    this.name = 'NullifierTaken';
  }
}

/** The score row and event columns of a settled result. */
export function settledColumns(result: SettledScoring) {
  if (result.status === 'ERROR') {
    return {
      status: 'ERROR' as const,
      score: null,
      raw_score: null,
      passing: 0,
      threshold: result.threshold ?? null,
      evidence: null,
      // Nothing counted for a failed scoring: `{}`, so clients that iterate stamp_scores keep working.
      stamp_scores: '{}',
      stamps: '{}',
      expiration_date: null,
      error: result.error,
    };
  }
  const { outcome } = result;
  return {
    status: 'DONE' as const,
    score: outcome.score,
    raw_score: outcome.rawScore ?? outcome.score,
    passing: outcome.passing ? 1 : 0,
    threshold: outcome.threshold ?? null,
    evidence: outcome.evidence,
    stamp_scores: outcome.stampScores,
    stamps: outcome.stamps ?? '{}',
    expiration_date: outcome.expirationDate,
    error: null,
  };
}

export type Settled = ReturnType<typeof settledColumns>;

/**
 * Whether a result equals the latest event, told by the row it replaces, so that re-scoring an
 * unchanged passport need not read the event log. A settled row pointing at an event holds that
 * event's tracked columns, and that event is the latest `score.updated` one: recordScoring is the
 * only writer of both and points the row at every event it appends (a PROCESSING row is not
 * settled). Rows the 0013 backfill wrote may differ from their event in a column the event left
 * out, so only equality is trusted; a difference is settled by reading the event.
 */
export function unchangedSince(settled: Settled, previous: TrackedScoreRow | undefined): boolean {
  if (!previous || previous.event_id == null || (previous.status !== 'DONE' && previous.status !== 'ERROR')) return false;
  return !differsFromEvent(settled, previous);
}

/** The claims a recording must write: a live hold of the address with the same expiry needs none. */
export function holdsToWrite(outcome: ScoringOutcome, now: number): ScoringOutcome['claims'] {
  // Holds are never deleted, and a live hold cannot pass to another address before it expires.
  return outcome.claims.filter((claim) => !(claim.heldAlready && claim.expiresAt > now));
}

/**
 * A DONE result that equals the row it was scored over (`previous`, with its event) and needs no
 * hold written: the whole recording is then a refresh of the untracked columns, and the row it
 * leaves is returned with them. Null when the result needs recordScoring.
 */
export function unchangedRefresh(
  outcome: ScoringOutcome,
  previous: TrackedScoreRow | undefined,
  scorerId: number,
  address: string,
  now: number,
): ScoreRow | null {
  const settled = settledColumns({ status: 'DONE', outcome });
  if (!previous || !unchangedSince(settled, previous) || holdsToWrite(outcome, now).length > 0) return null;
  return refreshedRow(scorerId, address, settled, now, previous);
}

/** The row a refresh leaves: the result's columns, the new timestamp, the event it already pointed at. */
export function refreshedRow(scorerId: number, address: string, settled: Settled, now: number, previous: TrackedScoreRow): ScoreRow {
  return { scorer_id: scorerId, address, ...settled, last_score_timestamp: now, event_id: previous.event_id };
}

/** Whether a settled result differs from an event in what the log tracks (spec v2.md "Score events"). */
export function differsFromEvent(settled: Settled, event: TrackedEvent | undefined): boolean {
  return (
    event === undefined ||
    event.status !== settled.status ||
    event.score !== settled.score ||
    Number(event.passing) !== settled.passing ||
    event.threshold !== settled.threshold ||
    event.evidence !== settled.evidence ||
    event.error !== settled.error ||
    event.stamps !== settled.stamps
  );
}
