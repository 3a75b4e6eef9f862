import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { V2ScoreService } from '../v2-scores.service.js';
import { errorResponses } from '../../../http/errors.js';
import { AddressSchema, ScorerIdSchema } from '../../../http/schemas.js';
import { typed } from '../../../http/typebox.js';
import { requirePermission } from '../../accounts/api-key-auth.js';
import { V2ScoreSchema } from '../v2-score.schema.js';
import { v2ScoreJson } from '../v2-score-json.js';

const Params = Type.Object({ scorer_id: ScorerIdSchema, address: AddressSchema });

const HistoryQuery = Type.Object({
  created_at: Type.String({
    maxLength: 64,
    description: 'ISO 8601 date (the end of that UTC day) or date-time: the score as it was at that moment.',
    examples: ['2026-03-01', '2026-03-01T12:00:00+00:00'],
  }),
});

/** What these routes use. */
export interface V2ScoreRouteDeps {
  v2: { scores: Pick<V2ScoreService, 'scoreNow' | 'scoreAt'> };
}

/** `GET /v2/stamps/{scorer_id}/score/{address}` and its history. */
export function v2ScoreRoutes(instance: FastifyInstance, deps: V2ScoreRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/v2/stamps/:scorer_id/score/:address',
    {
      // It records the score (and may fire webhooks): a portal cookie needs its CSRF token here.
      config: { changesState: true },
      schema: {
        tags: ['v2'],
        summary: 'Score an address now, from its stored stamps',
        description:
          'Scores synchronously (no submission needed) and records the result as a v1 submission would, so v1 reads see it. ' +
          'When nothing changed since the last scoring the stored result is served. `score` is the raw weighted sum for every ' +
          'scorer type. A scorer whose settings cannot be used answers 200 with `error` set. Needs `read_scores`; with the ' +
          'portal session cookie instead of a key, also `X-CSRF-Token` (the request records a score).\n\n' +
          'Example: `curl -H "X-API-KEY: $KEY" $BASE/v2/stamps/1/score/0x5cdef6d4b2f8e6e1f3b0b0a5e3d2c1b0a9f8e7d6`',
        security: [{ apiKey: [] }],
        params: Params,
        response: { 200: V2ScoreSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const caller = requirePermission(request, 'read_scores');
      const { row } = await deps.v2.scores.scoreNow(Number(request.params.scorer_id), caller.accountId, request.params.address.toLowerCase());
      // The body is written by hand (see v2ScoreJson); the schema above documents it.
      return reply.type('application/json; charset=utf-8').serializer(v2ScoreJson).send(row as never);
    },
  );

  app.get(
    '/v2/stamps/:scorer_id/score/:address/history',
    {
      schema: {
        tags: ['v2'],
        summary: 'The score of an address as it was at a moment',
        description:
          'The latest recorded score at or before `created_at` (a date alone means the end of that UTC day), from the score ' +
          'event log. Never scores. No score by then: 404 `score_not_found` with the `address`. Needs `historical_endpoint`.\n\n' +
          'Example: `curl -H "X-API-KEY: $KEY" "$BASE/v2/stamps/1/score/0x5cdef6d4b2f8e6e1f3b0b0a5e3d2c1b0a9f8e7d6/history?created_at=2026-03-01"`',
        security: [{ apiKey: [] }],
        params: Params,
        querystring: HistoryQuery,
        response: { 200: V2ScoreSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'historical_endpoint');
      return deps.v2.scores.scoreAt(Number(request.params.scorer_id), caller.accountId, request.params.address.toLowerCase(), request.query.created_at);
    },
  );
}
