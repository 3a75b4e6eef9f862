// TEMPORARY until the v2core merge: a v2-like score computed with scorePassport, written nowhere.
import { scorePassport, type PassportScoringDeps } from '../jobs/passport-scoring.js';
import type { ScoreAddress } from './batch-worker.js';

export function preV2ScoreAddress(deps: PassportScoringDeps): ScoreAddress {
  return async (scorerId, _accountId, address) => {
    const outcome = await scorePassport(deps, scorerId, address, Date.now());
    return {
      written: false,
      score: { address, score: outcome.score, passing_score: null, threshold: null, error: null, stamps: JSON.parse(outcome.stampScores) },
    };
  };
}
