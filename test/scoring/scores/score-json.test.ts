import { describe, expect, it } from 'vitest';
import { singleScoreJson } from '../../../src/scoring/scores/score-json.js';
import type { ScoreRow } from '../../../src/scoring/scores/scores.repository.js';
import { toScoreRecord } from '../../../src/scoring/scores/scores.service.js';

const base: ScoreRow = {
  scorer_id: 1,
  address: '0x' + 'ab'.repeat(20),
  status: 'DONE',
  score: '2.57200',
  evidence: null,
  error: null,
  last_score_timestamp: Date.UTC(2026, 2, 1, 12, 0, 0, 123),
  expiration_date: Date.UTC(2026, 5, 1),
  stamp_scores: JSON.stringify({ Google: '0.52500', Linkedin: '1.53100', '__proto__': '1.00000', 'quote"d': '0.10000' }),
};

const rows: [string, ScoreRow][] = [
  ['a weighted DONE row', base],
  ['a binary DONE row', { ...base, score: '1.00000', evidence: JSON.stringify({ type: 'ThresholdScoreCheck', success: true, rawScore: '2.57200', threshold: '2.00000' }) }],
  ['a PROCESSING row', { ...base, status: 'PROCESSING', score: null, expiration_date: null, stamp_scores: null }],
  ['an ERROR row with an awkward message', { ...base, status: 'ERROR', score: null, expiration_date: null, stamp_scores: '{}', error: 'Weight "x" is \\ bad\n – ünïcode' }],
  ['a DONE row from before migration 0009', { ...base, expiration_date: null, stamp_scores: null }],
  // PostgreSQL hands bigint columns back as numbers through the pool's parser; strings are tolerated too.
  ['a row with bigint columns as text', { ...base, last_score_timestamp: String(base.last_score_timestamp) as never, expiration_date: String(base.expiration_date) as never }],
];

describe('the single-score body written by hand', () => {
  it.each(rows)('equals the record repeated at the top level and as a list of one, byte for byte, for %s', (_what, row) => {
    const record = toScoreRecord({ ...row, last_score_timestamp: Number(row.last_score_timestamp), expiration_date: row.expiration_date === null ? null : Number(row.expiration_date) });
    const json = singleScoreJson(row);
    expect(json).toBe(JSON.stringify({ ...record, items: [record], count: 1 }));
    expect(JSON.parse(json)).toEqual({ ...record, items: [record], count: 1 });
  });
});
