import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../http/errors.js';
import { type BudgetCounters, registerIpRateLimit } from '../../http/rate-limit.js';
import { typed } from '../../http/typebox.js';
import type { OnchainService } from '../onchain.service.js';
import { ChainListingSchema } from '../onchain.schema.js';

/** Requests per minute from one client address to the chains listing (no key). */
export const CHAINS_PER_MINUTE = 120;

export interface ChainsRouteDeps {
  onchain: Pick<OnchainService, 'chains'>;
  counters: BudgetCounters;
}

/** `GET /v2/onchain/chains`: public, budgeted per client address. */
export async function chainsRoutes(instance: FastifyInstance, deps: ChainsRouteDeps): Promise<void> {
  const app = typed(instance);
  await registerIpRateLimit(app, {
    name: 'onchain-chains',
    max: CHAINS_PER_MINUTE,
    windowMs: 60_000,
    redis: deps.counters.redis,
    redisWatch: deps.counters.redisWatch,
    onRejected: () => deps.counters.onRejected?.('onchain'),
  });
  app.get(
    '/v2/onchain/chains',
    {
      schema: {
        tags: ['v2'],
        summary: 'The chains attestations are made for, their contracts, schemas and signers',
        description:
          'Per chain: the EAS and schema registry addresses, Stampgate\'s verifier, resolver and decoder, both EAS schema strings and UIDs, ' +
          'and every attestation signer with when it was added (and removed), so integrators pin what to trust. No API key; ' +
          `${CHAINS_PER_MINUTE} requests per minute per client address. No chain deployed: 503 \`onchain_not_configured\`.`,
        security: [],
        response: { 200: ChainListingSchema, ...errorResponses(429, 503) },
      },
    },
    async () => deps.onchain.chains(),
  );
}
