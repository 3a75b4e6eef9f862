/**
 * The v2 helpers: a synchronous score, the score as it was at a moment, batches (synchronous, and
 * queued with streamed results) and the event feed.
 *
 * openapi-fetch's answer type leaves out properties whose schema is only `null` (`points_data`,
 * `possible_points_data`); the service sends them, so the answers are typed as the document says.
 */
import { unwrap, type CallOptions, type ClientContext } from './calls.js';
import { ClientErrorCode, StampgateError, errorFromResponse } from './errors.js';
import type { Batch, ScoreEvent, V2Score } from './types.js';

const RESULTS_IDLE_PAUSE_MS = 1_000;

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

export async function scoreMany(context: ClientContext, scorerId: string | number, addresses: readonly string[], options: CallOptions): Promise<V2Score[]> {
  const answer = await unwrap(
    context.api.POST('/v2/stamps/{scorer_id}/scores', {
      params: { path: { scorer_id: String(scorerId) } },
      body: { addresses: [...addresses] },
      signal: options.signal,
    }),
  );
  return answer.items as V2Score[];
}

export function createBatch(context: ClientContext, scorerId: string | number, addresses: readonly string[], options: CallOptions): Promise<Batch> {
  return unwrap(
    context.api.POST('/v2/scorers/{scorer_id}/batches', {
      params: { path: { scorer_id: String(scorerId) } },
      body: { addresses: [...addresses] },
      signal: options.signal,
    }),
  );
}

export function getBatch(context: ClientContext, id: string, options: CallOptions): Promise<Batch> {
  return unwrap(context.api.GET('/v2/batches/{id}', { params: { path: { id } }, signal: options.signal }));
}

export function cancelBatch(context: ClientContext, id: string, options: CallOptions): Promise<Batch> {
  return unwrap(context.api.DELETE('/v2/batches/{id}', { params: { path: { id } }, signal: options.signal }));
}

/** NDJSON lines of a body stream, decoded as they arrive (one line in memory at a time, plus one chunk). */
async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line.length > 0) yield line;
        newline = pending.indexOf('\n');
      }
      if (done) break;
    }
    if (pending.trim().length > 0) yield pending.trim();
  } finally {
    // Stops the download when the caller leaves the loop early.
    await reader.cancel().catch(() => {});
  }
}

/**
 * Results of a queued batch in input order, as they finish. The service streams a running batch
 * until it ends or goes quiet for a while; the iterator then resumes from the lines it has (`offset`)
 * until the batch is `DONE` or `CANCELLED`, so one `for await` reads every result exactly once.
 */
export async function* batchResults(context: ClientContext, id: string, options: CallOptions): AsyncGenerator<V2Score, void, undefined> {
  let offset = 0;
  let ended = false;
  for (;;) {
    const { data: body, error, response } = await context.api.GET('/v2/batches/{id}/results', {
      params: { path: { id }, query: { offset } },
      parseAs: 'stream',
      headers: { accept: 'application/x-ndjson' },
      signal: options.signal,
    });
    if (!response.ok) throw errorFromResponse(response, error);
    const before = offset;
    if (body) {
      for await (const line of ndjsonLines(body)) {
        let result: V2Score;
        try {
          result = JSON.parse(line) as V2Score;
        } catch (cause) {
          throw new StampgateError({ code: ClientErrorCode.invalidResponse, status: response.status, detail: `A result line is not JSON: ${line.slice(0, 80)}`, cause });
        }
        offset += 1;
        yield result;
      }
    }
    // The batch had ended before this last read began: everything it has was in it.
    if (ended) return;
    const batch = await getBatch(context, id, options);
    ended = batch.status === 'DONE' || batch.status === 'CANCELLED';
    // Nothing new and still queued: the service answered at once, so pause before asking again.
    if (!ended && offset === before) await context.clock.sleep(RESULTS_IDLE_PAUSE_MS, options.signal);
  }
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
