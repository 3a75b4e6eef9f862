import createFetchClient, { type Client } from 'openapi-fetch';
import { getScore, submitPassport, type CallOptions, type ClientContext, type SubmitOptions } from './calls.js';
import type { paths } from './generated/openapi.js';
import { type Clock, type FetchFunction, type RetryOptions, fetchOnce, retryingFetch, systemClock } from './transport.js';
import { submitAndWait, type SubmitAndWaitOptions } from './submit-and-wait.js';
import { bountyPages, scorePages, stampPages, type PageOptions } from './paging.js';
import type { Batch, Bounty, BountyFilters, ScoreEvent, ScoreListFilters, ScoreRead, ScoreRecord, StampItem, SubmittedScore, V2Score } from './types.js';
import { batchResults, cancelBatch, createBatch, eventPages, getBatch, scoreAt, scoreMany, scoreV2, type EventOptions } from './v2.js';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Root URL of the Stampgate service, e.g. `https://scorer.example.org` (no trailing path needed). */
  baseUrl: string;
  /**
   * An integrator API key, sent as `X-API-KEY`. Needed for the scoring routes; the public data API
   * (bounties) works without one. Keep it on a server: never ship a key to a browser.
   */
  apiKey?: string;
  /** The `fetch` to use (default `globalThis.fetch`); pass one for proxies, instrumentation or tests. */
  fetch?: FetchFunction;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries of reads after 429/5xx or a network failure (see {@link RetryOptions}). */
  retry?: RetryOptions;
  /** Time source and waits (default: the system clock and `setTimeout`). */
  clock?: Clock;
}

/** A client made by {@link createClient}. */
export interface StampgateClient {
  /**
   * The typed low-level client (openapi-fetch) for any route of the service: paths, parameters,
   * bodies and answers are all checked against the generated OpenAPI types. Answers are
   * `{ data, error, response }`; nothing is thrown for an HTTP error. Reads retry like the helpers.
   */
  readonly api: Client<paths>;
  /**
   * `POST /registry/submit-passport` once: the record, `DONE` if scoring finished within the server's
   * wait, else `PROCESSING`. Throws {@link StampgateError} for any error answer. Never retried.
   */
  submitPassport(scorerId: string | number, address: string, options?: SubmitOptions): Promise<SubmittedScore>;
  /** `GET /registry/score/{scorer_id}/{address}`: the stored score record (throws `not_submitted` if never submitted). */
  getScore(scorerId: string | number, address: string, options?: CallOptions): Promise<ScoreRead>;
  /**
   * Submits once, then polls the score with backoff until it is `DONE` or `ERROR`, or the deadline
   * passes (then it throws code `deadline_exceeded`; scoring goes on server-side). Never re-submits.
   * An `ERROR` record is returned, not thrown: its `error` says why scoring failed.
   */
  submitAndWait(scorerId: string | number, address: string, options?: SubmitAndWaitOptions): Promise<SubmittedScore | ScoreRead>;
  /**
   * `GET /v2/stamps/{scorer_id}/score/{address}`: scores the address **now** from its stored stamps
   * (no submission needed) and answers synchronously: `score` (raw weighted sum), `passing_score`
   * (score ≥ the scorer's threshold, compared exactly by the service), `threshold`, and every stamp
   * with the weight it added. The key needs `read_scores`.
   */
  score(scorerId: string | number, address: string, options?: CallOptions): Promise<V2Score>;
  /**
   * The v2 score as it was at a moment (`…/history?created_at=`), from the service's score history;
   * never re-scores. A `Date`, or an ISO 8601 date (the end of that UTC day) or date-time. No score by
   * then: `score_not_found` (404). The key needs `historical_endpoint`.
   */
  scoreAt(scorerId: string | number, address: string, at: Date | string, options?: CallOptions): Promise<V2Score>;
  /**
   * `POST /v2/stamps/{scorer_id}/scores`: up to 100 addresses scored now, answered in input order (an
   * address listed twice is answered twice). Costs one rate-limit unit per address; any invalid
   * address is `invalid_address` (400) and nothing is scored.
   */
  scoreMany(scorerId: string | number, addresses: readonly string[], options?: CallOptions): Promise<V2Score[]>;
  /**
   * Queues a batch (`POST /v2/scorers/{scorer_id}/batches`, up to 100 000 addresses): scored in the
   * background, durably, each address once. Read the results with {@link StampgateClient.batchResults}.
   * Over the key's daily batch quota: `batch_quota_exceeded` (429, `retryAfterMs` to the next UTC day).
   */
  createBatch(scorerId: string | number, addresses: readonly string[], options?: CallOptions): Promise<Batch>;
  /** A batch and its progress (`status`: PENDING, RUNNING, DONE or CANCELLED; `done`, `failed`, `total`). */
  getBatch(id: string, options?: CallOptions): Promise<Batch>;
  /** Cancels a batch: addresses not scored yet will not be; results so far are kept. */
  cancelBatch(id: string, options?: CallOptions): Promise<Batch>;
  /**
   * Every result of a batch in input order, as the addresses finish (v2 score objects; a failed
   * address has `error` set), streamed as NDJSON and resumed until the batch has ended: one
   * `for await` reads each result once, holding one line at a time.
   */
  batchResults(id: string, options?: CallOptions): AsyncIterableIterator<V2Score>;
  /**
   * The scorer's score events (`score.updated`, `score.expiring`), oldest first, from `after`; with
   * `follow: true` it keeps polling once caught up (stop with `break` or the signal). `data` is the
   * body a webhook of the event carries. The key needs `historical_endpoint`.
   */
  events(scorerId: string | number, options?: EventOptions): AsyncIterableIterator<ScoreEvent>;
  /**
   * Every score record of a scorer, oldest scoring first, fetched page by page as you iterate.
   * Paging is by `last_score_timestamp`, so a record re-scored while you iterate comes again with
   * its new score, and none is skipped.
   */
  scores(scorerId: string | number, filters?: ScoreListFilters, options?: PageOptions): AsyncIterableIterator<ScoreRecord>;
  /** Every stamp of an address (`GET /registry/stamps/{address}`), following the `next` tokens. */
  stamps(address: string, options?: PageOptions & { includeMetadata?: boolean }): AsyncIterableIterator<StampItem>;
  /**
   * Bounties of the public data API matching `filters`. Without `order_by` they come in id order and
   * are paged with `pk__gt`, to any depth; with another `order_by` the iterator follows the `Link`
   * pages, which the service serves to an offset of 10 000.
   */
  bounties(filters?: BountyFilters, options?: PageOptions): AsyncIterableIterator<Bounty>;
}

/**
 * Creates a client for one Stampgate service.
 *
 * @example
 * ```ts
 * import { createClient } from '@stampgate/client';
 * const stampgate = createClient({ baseUrl: 'https://scorer.example.org', apiKey: process.env.STAMPGATE_API_KEY });
 * const record = await stampgate.submitAndWait(4, '0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b');
 * if (record.status === 'DONE' && Number(record.score) >= 20) grantAccess();
 * ```
 */
export function createClient(options: ClientOptions): StampgateClient {
  const clock = options.clock ?? systemClock;
  // Looked up on each call, and called unbound from its object: browsers refuse a detached `this`.
  const baseFetch: FetchFunction = options.fetch ?? ((request) => globalThis.fetch(request));
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    fetch: retryingFetch(baseFetch, clock, options.retry),
  });
  const context: ClientContext = { api, clock, singleAttempt: (request) => fetchOnce(baseFetch, request) };

  return {
    api,
    submitPassport: (scorerId, address, submit = {}) => submitPassport(context, scorerId, address, submit),
    getScore: (scorerId, address, call = {}) => getScore(context, scorerId, address, call),
    submitAndWait: (scorerId, address, wait = {}) => submitAndWait(context, scorerId, address, wait),
    score: (scorerId, address, call = {}) => scoreV2(context, scorerId, address, call),
    scoreAt: (scorerId, address, at, call = {}) => scoreAt(context, scorerId, address, at, call),
    scoreMany: (scorerId, addresses, call = {}) => scoreMany(context, scorerId, addresses, call),
    createBatch: (scorerId, addresses, call = {}) => createBatch(context, scorerId, addresses, call),
    getBatch: (id, call = {}) => getBatch(context, id, call),
    cancelBatch: (id, call = {}) => cancelBatch(context, id, call),
    batchResults: (id, call = {}) => batchResults(context, id, call),
    events: (scorerId, feed = {}) => eventPages(context, scorerId, feed),
    scores: (scorerId, filters = {}, paging = {}) => scorePages(context, String(scorerId), filters, paging),
    stamps: (address, paging = {}) => stampPages(context, address, paging),
    bounties: (filters = {}, paging = {}) => bountyPages(context, filters, paging),
  };
}
