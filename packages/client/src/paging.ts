/**
 * Async iterators over the service's lists. Each fetches one page when the previous one is used up,
 * so a `break` stops the requests, and memory holds one page at a time.
 */
import { unwrap, type CallOptions, type ClientContext } from './calls.js';
import { ClientErrorCode, StampgateError } from './errors.js';
import type { Bounty, BountyFilters, ScoreListFilters, ScoreRecord, StampItem } from './types.js';

/** Paging options of the iterators. */
export interface PageOptions extends CallOptions {
  /** Items fetched per request (default 100; the service allows up to 1000). */
  pageSize?: number;
}

const DEFAULT_PAGE_SIZE = 100;

/**
 * Keyset paging on (`last_score_timestamp`, `address`), the list's own order: each next page asks for
 * `last_score_timestamp_gte` the last timestamp seen and skips the rows of that timestamp already
 * yielded. Offset paging would skip a record whenever one before it was re-scored (it moves to the end).
 */
export async function* scorePages(
  context: ClientContext,
  scorerId: string,
  filters: ScoreListFilters,
  options: PageOptions,
): AsyncGenerator<ScoreRecord, void, undefined> {
  const limit = options.pageSize ?? DEFAULT_PAGE_SIZE;
  let since: string | undefined;
  let seenAtSince = 0;
  for (;;) {
    const query: ScoreListFilters & { limit: number; offset: number } = { ...filters, limit, offset: seenAtSince };
    if (since !== undefined) {
      // `since` is at or after any lower bound the caller gave, so it replaces it.
      delete query.last_score_timestamp__gte;
      query.last_score_timestamp_gte = since;
    }
    const page = await unwrap(
      context.api.GET('/registry/score/{scorer_id}', { params: { path: { scorer_id: scorerId }, query }, signal: options.signal }),
    );
    for (const record of page.items) {
      if (record.last_score_timestamp === since) {
        seenAtSince += 1;
      } else {
        since = record.last_score_timestamp;
        seenAtSince = 1;
      }
      yield record;
    }
    if (page.items.length < limit) return;
  }
}

/** Follows the `next` page tokens of `GET /registry/stamps/{address}`. */
export async function* stampPages(
  context: ClientContext,
  address: string,
  options: PageOptions & { includeMetadata?: boolean },
): AsyncGenerator<StampItem, void, undefined> {
  const limit = options.pageSize ?? DEFAULT_PAGE_SIZE;
  let token: string | undefined;
  for (;;) {
    const query: { limit: number; token?: string; include_metadata?: boolean } = { limit };
    if (token !== undefined) query.token = token;
    if (options.includeMetadata) query.include_metadata = true;
    const page = await unwrap(
      context.api.GET('/registry/stamps/{address}', { params: { path: { address }, query }, signal: options.signal }),
    );
    yield* page.items;
    if (page.next === null) return;
    const next = new URL(page.next, 'http://base.invalid').searchParams.get('token');
    if (next === null || next === token) {
      throw new StampgateError({ code: ClientErrorCode.invalidResponse, status: 200, detail: `The stamp page's next link has no new token: ${page.next}` });
    }
    token = next;
  }
}

/**
 * Bounties in id order paged with `pk__gt` (any depth), or, for another `order_by`, pages of
 * `offset` for as long as the answer carries a `Link: rel="next"`.
 */
export async function* bountyPages(context: ClientContext, filters: BountyFilters, options: PageOptions): AsyncGenerator<Bounty, void, undefined> {
  const limit = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const byId = filters.order_by === undefined || filters.order_by === 'pk';
  let afterPk = 0;
  let offset = 0;
  for (;;) {
    const query = byId ? { ...filters, order_by: 'pk', pk__gt: afterPk, limit } : { ...filters, limit, offset };
    const result = context.api.GET('/api/v0.1/bounties/', { params: { query }, signal: options.signal });
    const { response } = await result;
    const page = await unwrap(result);
    yield* page;
    const last = page[page.length - 1];
    if (last === undefined) return;
    if (byId) {
      if (page.length < limit) return;
      afterPk = last.pk;
    } else {
      if (!/;\s*rel="?next"?/i.test(response.headers.get('link') ?? '')) return;
      offset += page.length;
    }
  }
}
