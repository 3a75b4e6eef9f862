/** Rendering of batch results, one line per address: NDJSON (v2 score objects) or CSV. Pure. */

export type ResultFormat = 'ndjson' | 'csv';

export const csvHeader = 'address,score,passing_score,threshold,error\n';

export interface ResultRow {
  address: string;
  state: 'pending' | 'done' | 'failed';
  /** The v2 score object as JSON text. */
  result: string | null;
  error: string | null;
}

/**
 * What a failed address answers in NDJSON: the v2 shape of a failed scoring (score "0.00000", not
 * passing, `error` set); nothing was recorded for it, so its timestamps and threshold are null.
 */
export function failedScore(address: string, error: string): object {
  return {
    address,
    score: '0.00000',
    passing_score: false,
    threshold: null,
    last_score_timestamp: null,
    expiration_timestamp: null,
    error,
    stamps: {},
    points_data: null,
    possible_points_data: null,
  };
}

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One finished row as a line of the chosen format (the stored JSON is copied as it is for NDJSON). */
export function renderResult(row: ResultRow, format: ResultFormat): string {
  if (format === 'ndjson') {
    return `${row.state === 'failed' || row.result === null ? JSON.stringify(failedScore(row.address, row.error ?? 'not scored')) : row.result}\n`;
  }
  if (row.state === 'failed' || row.result === null) return `${row.address},,,,${csvField(row.error ?? 'not scored')}\n`;
  const score = JSON.parse(row.result) as { address: string; score: unknown; passing_score: unknown; threshold: unknown; error: unknown };
  return `${score.address},${csvField(score.score)},${csvField(score.passing_score)},${csvField(score.threshold)},${csvField(score.error)}\n`;
}
