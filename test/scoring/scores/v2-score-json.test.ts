import { describe, expect, it } from 'vitest';
import type { ScoresTable } from '../../../src/db/tables/index.js';
import { v2ScoreJson } from '../../../src/scoring/scores/v2-score-json.js';
import { toV2Score } from '../../../src/scoring/scores/v2-scores.service.js';

const base: ScoresTable = {
  scorer_id: 1,
  address: '0x' + 'a'.repeat(40),
  status: 'DONE',
  score: '1.00000',
  evidence: null,
  error: null,
  last_score_timestamp: Date.UTC(2026, 10, 25, 13, 0, 0, 123),
  expiration_date: Date.UTC(2027, 0, 1),
  stamp_scores: '{"Google":"0.52500"}',
  raw_score: '21.75400',
  passing: 1,
  threshold: '20.00000',
  stamps: '{"Ens":{"score":"0.00000","dedup":true,"expiration_date":"2027-01-02T00:00:00.000+00:00"},"Google":{"score":"21.75400","dedup":false,"expiration_date":"2027-01-01T00:00:00.000+00:00"}}',
  event_id: 7,
};

describe('v2ScoreJson', () => {
  it.each([
    ['a passing DONE row', base],
    ['a failing DONE row without expiry', { ...base, passing: 0, raw_score: '0.00000', expiration_date: null, stamps: '{}' }],
    ['an ERROR row', { ...base, status: 'ERROR' as const, score: null, raw_score: null, passing: 0, threshold: null, stamps: '{}', expiration_date: null, error: 'It "broke".\n' }],
    ['a row from before the v2 columns', { ...base, raw_score: null, passing: null, threshold: null, stamps: null }],
    ['PostgreSQL bigint text', { ...base, last_score_timestamp: String(base.last_score_timestamp) as unknown as number, expiration_date: String(base.expiration_date) as unknown as number }],
  ])('writes exactly JSON.stringify(toV2Score(row)) for %s', (_, row) => {
    const written = v2ScoreJson(row);
    expect(written).toBe(JSON.stringify(toV2Score(row)));
    expect(JSON.parse(written)).toEqual(toV2Score(row));
  });
});
