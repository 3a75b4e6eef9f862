/** The UTC days of the daily batch quota. */

const day = 86_400_000;

/** The UTC day of `now` as text, YYYY-MM-DD (a `batch_usage` row's day). */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Seconds until the next UTC midnight, when the daily quota starts afresh. */
export function secondsToNextUtcDay(now: number): number {
  return Math.max(1, Math.ceil((Math.floor(now / day + 1) * day - now) / 1000));
}
