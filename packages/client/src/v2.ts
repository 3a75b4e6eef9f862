/**
 * The v2 helpers: a synchronous score, the score as it was at a moment, and the event feed.
 *
 * openapi-fetch's answer type leaves out properties whose schema is only `null` (`points_data`,
 * `possible_points_data`); the service sends them, so the answers are typed as the document says.
 */
import { unwrap, type CallOptions, type ClientContext } from './calls.js';
import type { ScoreEvent, V2Score } from './types.js';

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

/** Options of {@link eventPages}. */
export interface EventOptions extends CallOptions {
  /** Start after this event id (default: from the first event). */
  after?: string | number;
  /** Events fetched per request (default 100, at most 1000). */
  pageSize?: number;
  /**
   * Keep polling once caught up, every `pollIntervalMs` (default: stop when caught up). Stop it with
   * `break` or the signal.
   */
  follow?: boolean;
  /** Pause between polls once caught up, with `follow` (default 5 000 ms). */
  pollIntervalMs?: number;
}

/** The event feed, oldest first, following `after` = the last event id seen. */
export async function* eventPages(context: ClientContext, scorerId: string | number, options: EventOptions): AsyncGenerator<ScoreEvent, void, undefined> {
  const limit = options.pageSize ?? 100;
  let after = Number(options.after ?? 0);
  for (;;) {
    const page = await unwrap(
      context.api.GET('/v2/scorers/{scorer_id}/events', {
        params: { path: { scorer_id: String(scorerId) }, query: { after, limit } },
        signal: options.signal,
      }),
    );
    for (const event of page.items) {
      after = Number(event.event_id);
      yield event;
    }
    if (page.items.length < limit) {
      if (!options.follow) return;
      await context.clock.sleep(options.pollIntervalMs ?? 5_000, options.signal);
    }
  }
}
