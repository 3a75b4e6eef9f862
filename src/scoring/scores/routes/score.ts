import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { AccountService } from '../../accounts/accounts.service.js';
import type { ScoreService } from '../scores.service.js';
import { requirePermission } from '../../accounts/api-key-auth.js';
import { errorResponses } from '../../../http/errors.js';
import { AddressSchema, LimitSchema, OffsetSchema, ScorerIdSchema } from '../../../http/schemas.js';
import { ScoreListSchema, SingleScoreSchema } from '../score-record.schema.js';

const jsonType = 'application/json; charset=utf-8';

const Timestamp = Type.String({ maxLength: 64, description: 'ISO 8601 date-time, e.g. 2026-03-01T12:00:00+00:00.' });

const ListQuery = Type.Object({
  last_score_timestamp_gt: Type.Optional(Timestamp),
  last_score_timestamp_gte: Type.Optional(Timestamp),
  last_score_timestamp__gt: Type.Optional({ ...Timestamp, description: 'Same as last_score_timestamp_gt.' }),
  last_score_timestamp__gte: Type.Optional({ ...Timestamp, description: 'Same as last_score_timestamp_gte.' }),
  address: Type.Optional({ ...AddressSchema, description: 'Only this address (exact, any case).' }),
  limit: Type.Optional(LimitSchema),
  offset: Type.Optional(OffsetSchema),
});


/** What these routes use. */
export interface ScoreRouteDeps {
  accounts: Pick<AccountService, 'scorerOfAccount'>;
  scores: Pick<ScoreService, 'scoreBody' | 'listScores'>;
}

export function scoreRoutes(instance: FastifyInstance, deps: ScoreRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/registry/score/:scorer_id/:address',
    {
      schema: {
        tags: ['scoring'],
        summary: 'The score of one submitted address',
        description:
          'A score list of one item whose record fields are repeated at the top level: read `items[0]`, or `score`, ' +
          '`status`, `stamp_scores`… directly as clients of the reference service do. Poll until `status` is DONE or ERROR.',
        security: [{ apiKey: [] }],
        params: Type.Object({ scorer_id: ScorerIdSchema, address: AddressSchema }),
        response: { 200: SingleScoreSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    // Not async: a cached body is sent at once, without a promise (see scoreBody).
    (request, reply) => {
      const caller = requirePermission(request, 'read_scores');
      const body = deps.scores.scoreBody(Number(request.params.scorer_id), caller.accountId, request.params.address.toLowerCase());
      // The body is written by hand (see singleScoreJson), once per record version; the schema above documents it.
      if (typeof body === 'string') {
        reply.type(jsonType).send(body as never);
        return;
      }
      return body.then((json) => {
        reply.type(jsonType).send(json as never);
      });
    },
  );

  app.get(
    '/registry/score/:scorer_id',
    {
      schema: {
        tags: ['scoring'],
        summary: 'Scores of every address submitted to a scorer',
        description: 'Ordered by last_score_timestamp ascending, then address.',
        security: [{ apiKey: [] }],
        params: Type.Object({ scorer_id: ScorerIdSchema }),
        querystring: ListQuery,
        response: { 200: ScoreListSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'read_scores');
      const scorer = await deps.accounts.scorerOfAccount(Number(request.params.scorer_id), caller.accountId);
      const q = request.query;
      return deps.scores.listScores(scorer.id, {
        last_score_timestamp_gt: q.last_score_timestamp_gt ?? q.last_score_timestamp__gt,
        last_score_timestamp_gte: q.last_score_timestamp_gte ?? q.last_score_timestamp__gte,
        address: q.address,
        limit: q.limit ?? 100,
        offset: q.offset ?? 0,
      });
    },
  );
}
