import type { ScoreRow } from './scores.repository.js';
import { formatScoringTimestamp } from './timestamps.js';

const text = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));

/**
 * The body of the single-score read, written straight from the row. It is the hottest response
 * and repeats the record twice; the schema serializer walks `stamp_scores` (a map inside a union)
 * key by key, several times slower than the whole read used to be. `evidence` and `stamp_scores`
 * are JSON text the service wrote itself (JSON.stringify of the engine's result), so they are
 * copied as they are. Equal, field for field and in order, to
 * `JSON.stringify({...toScoreRecord(row), items: [toScoreRecord(row)], count: 1})` (tested).
 */
export function singleScoreJson(row: ScoreRow): string {
  const stampScores = row.stamp_scores ?? (row.status === 'PROCESSING' ? 'null' : '{}');
  const expiration = row.expiration_date === null ? 'null' : `"${formatScoringTimestamp(Number(row.expiration_date))}"`;
  const record =
    `{"address":${text(row.address)},"score":${text(row.score)},"status":${text(row.status)}` +
    `,"last_score_timestamp":"${formatScoringTimestamp(Number(row.last_score_timestamp))}","expiration_date":${expiration}` +
    `,"evidence":${row.evidence ?? 'null'},"error":${text(row.error)},"stamp_scores":${stampScores}}`;
  return `${record.slice(0, -1)},"items":[${record}],"count":1}`;
}
