import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../http/typebox.js';
import type { StakeService } from '../stake-amounts.service.js';
import { requirePermission } from '../../scoring/accounts/api-key-auth.js';
import { errorResponses } from '../../http/errors.js';
import { AddressSchema } from '../../http/schemas.js';

const Wei = Type.String({ pattern: '^[0-9]+$', description: 'Integer amount in wei (the smallest unit), as a decimal string.' });
const Round = Type.Object({ id: Type.String({ description: 'Round id, a decimal string.' }) });

export const StakingAmountsSchema = Type.Object(
  {
    users: Type.Array(
      Type.Object({
        address: Type.String({ description: 'The address, lower-case.' }),
        stakes: Type.Array(Type.Object({ stake: Wei, round: Round }), {
          description: 'Net self stake (stakes minus unstakes) per round, in ascending round order.',
        }),
        xstakeAggregates: Type.Array(Type.Object({ total: Wei, round: Round }), {
          description: 'Net community stake other addresses placed on this address, per round, in ascending round order.',
        }),
      }),
      { description: 'One entry for an address with staking events; empty otherwise.' },
    ),
  },
  { title: 'StakingAmounts' },
);

/** What the stake route uses. */
export interface StakeRouteDeps {
  stakes: Pick<StakeService, 'amountsFor'>;
  governanceToken: string;
}

/** `GET /registry/{token}-stake/{address}` and `govtoken-stake`. */
export function stakeRoutes(instance: FastifyInstance, deps: StakeRouteDeps): void {
  const app = typed(instance);
  // Fastify cannot put a parameter before a literal suffix in one segment: each token is a concrete path.
  const tokens = [...new Set([deps.governanceToken, 'govtoken'])];
  for (const token of tokens) {
    app.get(
      `/registry/${token}-stake/:address`,
      {
        schema: {
          tags: ['scoring'],
          summary: token === 'govtoken' ? 'Staking amounts of an address (token-neutral path)' : `Staking amounts of an address (${token.toUpperCase()})`,
          description:
            'Self stake per round and the community stake others placed on the address per round, from the staking ' +
            'contract’s events (indexed from the chain or imported). `{"users":[]}` for an address without staking events.',
          security: [{ apiKey: [] }],
          params: Type.Object({ address: AddressSchema }),
          response: { 200: StakingAmountsSchema, ...errorResponses(400, 401, 403, 429) },
        },
      },
      async (request) => {
        requirePermission(request, 'read_scores');
        return deps.stakes.amountsFor(request.params.address.toLowerCase());
      },
    );
  }
}
