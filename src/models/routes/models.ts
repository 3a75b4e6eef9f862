import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../http/errors.js';
import { typed } from '../../http/typebox.js';
import { requirePermission } from '../../scoring/accounts/api-key-auth.js';
import { ModelScoreParams, ModelScoreQuery, ModelScoreResponseSchema } from '../models.schema.js';
import type { ModelsService } from '../models.service.js';

export interface ModelsRouteDeps {
  models: ModelsService;
}

/** `GET /v2/models/score/{address}`: the operator's models' scores of an address (docs/models.md). */
export function modelsRoutes(instance: FastifyInstance, deps: ModelsRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/v2/models/score/:address',
    {
      schema: {
        tags: ['v2'],
        summary: 'Model scores of an address',
        description:
          'Asks each named model service of this operator for its score of the address (from its onchain history; no stamps needed) ' +
          'and answers `{"address","details":{"models":{"<name>":{"score":0-100,…}}}}`, fields beyond `score` as the model service sent them. ' +
          'Each model\'s answer is reused for MODEL_CACHE_SECONDS. Several models are asked at the same time; if any of them is down, ' +
          'slow or answers garbage the whole request is 502 `upstream_unavailable` naming it. A model that is not configured: 404 ' +
          '`model_not_found`. Needs `read_scores`; costs one rate-limit unit.\n\n' +
          'Example: `curl -H "X-API-KEY: $KEY" "$BASE/v2/models/score/0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b?model=aggregate"`',
        security: [{ apiKey: [] }],
        params: ModelScoreParams,
        querystring: ModelScoreQuery,
        response: { 200: ModelScoreResponseSchema, ...errorResponses(400, 401, 403, 404, 429, 502, 503) },
      },
    },
    async (request) => {
      requirePermission(request, 'read_scores');
      return deps.models.score(request.params.address.toLowerCase(), request.query.model);
    },
  );
}
