/** Inputs of the scoring engine's tests (test/scoring/engine-*.test.ts): candidate stamps and one call of computeScore. */
import { loadCatalogue } from '../../src/scoring/stamps/catalogue.js';
import { computeScore, type CandidateStamp, type NullifierHold, type ScorerSettings, type ScoringInput } from '../../src/scoring/scorers/engine.js';

export const { defaultWeights } = loadCatalogue();

export const ADDRESS = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
export const OTHER = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
export const NOW = new Date('2026-03-01T12:00:00.000Z');
export const DAY = 24 * 60 * 60 * 1000;
export const daysFromNow = (days: number): Date => new Date(NOW.getTime() + days * DAY);

export const weighted: ScorerSettings = { type: 'weighted', threshold: '20', weights: {} };
export const binary: ScorerSettings = { type: 'binary', threshold: '20', weights: {} };

let stampCounter = 0;
export function stamp(provider: string, overrides: Partial<CandidateStamp> = {}): CandidateStamp {
  stampCounter += 1;
  return {
    id: `stamp-${stampCounter}`,
    provider,
    nullifiers: [`v0.0.0:${provider}:${stampCounter}`],
    issuanceDate: daysFromNow(-10),
    expirationDate: daysFromNow(80),
    valid: true,
    ...overrides,
  };
}

export function score(stamps: CandidateStamp[], options: Partial<ScoringInput> = {}) {
  return computeScore({
    address: ADDRESS,
    scorer: weighted,
    defaultWeights,
    now: NOW,
    stamps,
    holds: new Map(),
    ...options,
  });
}

export const holds = (entries: Record<string, NullifierHold>): Map<string, NullifierHold> => new Map(Object.entries(entries));
