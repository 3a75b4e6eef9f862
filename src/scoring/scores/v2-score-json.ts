import type { ScoresTable } from '../../db/tables/index.js';
import { formatScoringTimestamp } from '../timestamps.js';

type V2Row = Pick<ScoresTable, 'address' | 'status' | 'error' | 'expiration_date' | 'raw_score' | 'passing' | 'threshold' | 'stamps' | 'last_score_timestamp'>;

const text = (value: string | null | undefined): string => (value == null ? 'null' : JSON.stringify(value));

/**
 * The v2 score body written straight from the row, as singleScoreJson does for v1: the schema
 * serializer walks `stamps` (a map of objects) key by key, while the row holds it as JSON text the
 * service rendered itself (breakdownJson), so it is copied as it is. Equal, field for field and in
 * order, to `JSON.stringify(toV2Score(row))` (tested).
 */
export function v2ScoreJson(row: V2Row): string {
  return `{${v2ScoreMembers(row, formatScoringTimestamp(Number(row.last_score_timestamp)))}}`;
}

/**
 * The members of that object without its braces, with `last_score_timestamp` given already written
 * (the event feed reuses the text of the event's own time), for a body that adds members after them.
 */
export function v2ScoreMembers(row: Omit<V2Row, 'last_score_timestamp'>, lastScoreTimestamp: string): string {
  const done = row.status === 'DONE';
  const expiration = row.expiration_date == null ? 'null' : `"${formatScoringTimestamp(Number(row.expiration_date))}"`;
  return (
    `"address":${text(row.address)},"score":${text(done ? (row.raw_score ?? '0.00000') : '0.00000')}` +
    `,"passing_score":${done && Number(row.passing) === 1},"threshold":${text(row.threshold ?? '0.00000')}` +
    `,"last_score_timestamp":"${lastScoreTimestamp}","expiration_timestamp":${expiration}` +
    `,"error":${text(row.error)},"stamps":${row.stamps || '{}'},"points_data":null,"possible_points_data":null`
  );
}
