import type { Database } from '../../db/connection.js';
import type { PassportScoringDeps } from '../jobs/passport-scoring.js';
import { scoreEventsRepository } from './score-events.repository.js';
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
  scoreWritten?: (scorerId: number, address: string) => Promise<void>,
) {
  const events = scoreEventsRepository(database);
  return {
    events,
    scores: v2ScoreService({ ...scoring, database, scores: scoresRepository(database.db), events, scoreWritten }, clock),
  };
}

export type V2Services = ReturnType<typeof createV2Services>;
