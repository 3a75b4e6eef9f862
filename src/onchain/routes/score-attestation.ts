import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../../http/errors.js';
import { AddressSchema, ScorerIdSchema } from '../../http/schemas.js';
import { typed } from '../../http/typebox.js';
import { requirePermission } from '../../scoring/accounts/api-key-auth.js';
import type { OnchainService } from '../onchain.service.js';
import { ChainIdQuery, ScoreAttestationSchema } from '../onchain.schema.js';

const Params = Type.Object({ scorer_id: ScorerIdSchema, address: AddressSchema });

export interface ScoreAttestationRouteDeps {
  onchain: Pick<OnchainService, 'offchainScoreAttestation'>;
}

/** `GET /v2/stamps/{scorer_id}/score/{address}/attestation`, in the API-key scope. */
export function scoreAttestationRoutes(instance: FastifyInstance, deps: ScoreAttestationRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/v2/stamps/:scorer_id/score/:address/attestation',
    {
      // It scores and records as the v2 score does: a portal cookie needs its CSRF token here.
      config: { changesState: true },
      schema: {
        tags: ['v2'],
        summary: 'The v2 score as a signed EAS offchain attestation',
        description:
          'Scores the address now (recorded as `GET /v2/stamps/{scorer_id}/score/{address}` records it) and answers the score as an ' +
          'EAS offchain attestation (version 2, with salt) of the score schema for `chain_id`, signed by the attestation signer. ' +
          'Verify it offline with eas-sdk (`Offchain.verifyOffchainAttestationSignature`), viem\'s `verifyTypedData` or ' +
          '`verifyScoreAttestation` of @stampgate/client, against a signer of `GET /v2/onchain/chains`. Integers are decimal text. ' +
          'Unknown chain: 404 `chain_not_found`; nothing deployed or no signer key: 503 `onchain_not_configured`. Needs `read_scores`.\n\n' +
          'Example: `curl -H "X-API-KEY: $KEY" "$BASE/v2/stamps/1/score/0x5cdef6d4b2f8e6e1f3b0b0a5e3d2c1b0a9f8e7d6/attestation?chain_id=10"`',
        security: [{ apiKey: [] }],
        params: Params,
        querystring: ChainIdQuery,
        response: { 200: ScoreAttestationSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'read_scores');
      return deps.onchain.offchainScoreAttestation(Number(request.params.scorer_id), caller.accountId, request.params.address.toLowerCase(), request.query.chain_id);
    },
  );
}
