/**
 * Names for the shapes the helpers take and return. Every one is derived from the generated
 * `paths` (openapi.json → generated/openapi.ts at build time); none is written by hand.
 */
import type { paths } from './generated/openapi.js';

type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Ok<Operation> = Operation extends { responses: { 200: infer Answer } } ? Json<Answer> : never;
type Query<Operation> = Operation extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** Every path of the service and its operations, as generated from the OpenAPI document. */
export type { paths };

/** Body of `POST /registry/submit-passport`. */
export type SubmitPassportBody = Json<NonNullable<paths['/registry/submit-passport']['post']['requestBody']>>;
/** Answer of `POST /registry/submit-passport`: a score record, `PROCESSING` when scoring has not finished in time. */
export type SubmittedScore = Ok<paths['/registry/submit-passport']['post']>;
/** Answer of `GET /registry/score/{scorer_id}/{address}`: the record at the top level, and as a one-item list. */
export type ScoreRead = Ok<paths['/registry/score/{scorer_id}/{address}']['get']>;
/** One score record of a scorer's list (`GET /registry/score/{scorer_id}`). */
export type ScoreRecord = Ok<paths['/registry/score/{scorer_id}']['get']>['items'][number];
/** Filters of the score list; paging (`limit`, `offset`) is the iterator's business. */
export type ScoreListFilters = Omit<Query<paths['/registry/score/{scorer_id}']['get']>, 'limit' | 'offset'>;
/** One stamp of `GET /registry/stamps/{address}`. */
export type StampItem = Ok<paths['/registry/stamps/{address}']['get']>['items'][number];
/** One bounty of the public data API (`GET /api/v0.1/bounties/`). */
export type Bounty = Ok<paths['/api/v0.1/bounties/']['get']>[number];
/** Filters and ordering of the bounty list; paging is the iterator's business. */
export type BountyFilters = Omit<Query<paths['/api/v0.1/bounties/']['get']>, 'limit' | 'offset' | 'pk__gt'>;
/** A v2 score object (`GET /v2/stamps/{scorer_id}/score/{address}`): scored now, with `passing_score` and every stamp. */
export type V2Score = Ok<paths['/v2/stamps/{scorer_id}/score/{address}']['get']>;
/** A queued batch and its progress (`GET /v2/batches/{id}`). */
export type Batch = Ok<paths['/v2/batches/{id}']['get']>;
/** One event of the feed (`GET /v2/scorers/{scorer_id}/events`); `data` is the body a webhook of the event carries. */
export type ScoreEvent = Ok<paths['/v2/scorers/{scorer_id}/events']['get']>['items'][number];
