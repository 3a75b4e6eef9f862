/** Scoring-service timestamps: ISO 8601 with milliseconds and an explicit `+00:00` offset. */
export function formatScoringTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace('Z', '+00:00');
}

const isoDateTime = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Parses a timestamp filter to epoch milliseconds, or null. An unencoded `+`
 * in a query string arrives as a space, so `…00 00:00` is read as `…00+00:00`.
 * Values without an offset are taken as UTC.
 */
export function parseTimestampFilter(raw: string): number | null {
  let text = raw.trim().replace(/ (\d{2}:?\d{2})$/, '+$1');
  if (!isoDateTime.test(text)) return null;
  text = text.replace(' ', 'T');
  if (/T[\d:.]+$/i.test(text)) text += 'Z';
  const ms = Date.parse(text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(ms) ? null : ms;
}
