import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../../http/errors.js';
import { AddressSchema, ScorerIdSchema } from '../../http/schemas.js';
import { typed } from '../../http/typebox.js';
import { requirePermission } from '../../scoring/accounts/api-key-auth.js';
import type { OnchainService } from '../onchain.service.js';
import { OnchainScoresSchema } from '../onchain.schema.js';

const Params = Type.Object({ scorer_id: ScorerIdSchema, address: AddressSchema });

export interface OnchainScoresRouteDeps {
  onchain: Pick<OnchainService, 'onchainScores'>;
}

/** `GET /v2/onchain/scores/{scorer_id}/{address}`, in the API-key scope (the portal cookie reaches it too). */
export function onchainScoresRoutes(instance: FastifyInstance, deps: OnchainScoresRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/v2/onchain/scores/:scorer_id/:address',
    {
      schema: {
        tags: ['v2'],
        summary: 'What each chain\'s decoder says of an address\'s score',
        description:
          'Reads `getScore(scorer_id, address)` of every deployed chain\'s decoder over its RPC endpoint, all chains at once, each ' +
          'bounded by OUTBOUND_TIMEOUT_MS: the score as integrators\' contracts see it, next to the stored one. It reads the chains ' +
          'only: nothing is scored or recorded. A chain that cannot be read is an entry with its `error` ' +
          '(`upstream_unavailable`, or `onchain_not_configured` when it has no RPC URL); the other chains still answer. ' +
          'No chain deployed: `chains` is empty; a deployment file that is not valid: 503 `onchain_not_configured`. Another account\'s scorer: 404. Needs `read_scores`.\n\n' +
          'Example: `curl -H "X-API-KEY: $KEY" $BASE/v2/onchain/scores/1/0x5cdef6d4b2f8e6e1f3b0b0a5e3d2c1b0a9f8e7d6`',
        security: [{ apiKey: [] }],
        params: Params,
        response: { 200: OnchainScoresSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'read_scores');
      return deps.onchain.onchainScores(Number(request.params.scorer_id), caller.accountId, request.params.address.toLowerCase());
    },
  );
}
