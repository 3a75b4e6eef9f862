import type { Database } from '../../db/connection.js';
import type { ScoreEventSink } from '../../events/score-event-sink.js';
import type { PassportScoringDeps } from '../jobs/passport-scoring.js';
import { scoreRecordsRepository } from '../records/score-records.repository.js';
import { scoresRepository } from './scores.repository.js';
import { v2ScoreService } from './v2-scores.service.js';

/**
 * The v2 read API's services: synchronous scoring (`scores.scoreNow`) and the score event log
 * (`events`: recordScoring, history reads). The v1 job queue writes through the same `events`.
 */
export function createV2Services(
  database: Database,
  scoring: PassportScoringDeps,
  clock: () => number = Date.now,
  scoresWritten?: (scorerId: number, addresses: readonly string[]) => Promise<void>,
  /** Hear every appended score event in its transaction (the webhook outbox). */
  sinks: readonly ScoreEventSink[] = [],
) {
  const events = scoreRecordsRepository(database, { sinks });
  return {
    events,
    scores: v2ScoreService({ ...scoring, database, scores: scoresRepository(database.db), events, scoresWritten }, clock),
  };
}

export type V2Services = ReturnType<typeof createV2Services>;
