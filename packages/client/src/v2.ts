/**
 * The v2 read helpers: a synchronous score, and the score as it was at a moment.
 *
 * openapi-fetch's answer type leaves out properties whose schema is only `null` (`points_data`,
 * `possible_points_data`); the service sends them, so the answers are typed as the document says.
 */
import { unwrap, type CallOptions, type ClientContext } from './calls.js';
import type { V2Score } from './types.js';

export function scoreV2(context: ClientContext, scorerId: string | number, address: string, options: CallOptions): Promise<V2Score> {
  return unwrap(
    context.api.GET('/v2/stamps/{scorer_id}/score/{address}', {
      params: { path: { scorer_id: String(scorerId), address } },
      signal: options.signal,
    }),
  ) as Promise<V2Score>;
}

export function scoreAt(
  context: ClientContext,
  scorerId: string | number,
  address: string,
  at: Date | string,
  options: CallOptions,
): Promise<V2Score> {
  // Whole milliseconds in UTC; a string is passed as given (a date alone means the end of that UTC day).
  const createdAt = typeof at === 'string' ? at : at.toISOString();
  return unwrap(
    context.api.GET('/v2/stamps/{scorer_id}/score/{address}/history', {
      params: { path: { scorer_id: String(scorerId), address }, query: { created_at: createdAt } },
      signal: options.signal,
    }),
  ) as Promise<V2Score>;
}
