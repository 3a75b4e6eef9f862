import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorResponses } from '../../http/errors.js';
import { type BudgetCounters, registerRateLimit } from '../../http/rate-limit.js';
import { typed } from '../../http/typebox.js';
import { apiKeyAuthentication, requirePermission } from '../../scoring/accounts/api-key-auth.js';
import type { ApiKeyService } from '../../scoring/accounts/api-keys.service.js';
import { tierBudget } from '../../scoring/accounts/key-rate-limit.js';
import { WALLET_ADDRESS_BUDGET } from '../../scoring/wallet/routes/wallet.js';
import type { WalletSessionService } from '../../scoring/wallet/wallet-sessions.service.js';
import type { AttestationCaller, OnchainService } from '../onchain.service.js';
import { AttestationRequestAnswerSchema, AttestationRequestBody, ChainIdParams } from '../onchain.schema.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The lower-case address of the wallet session that authenticated an attestation request, if one did. */
    attestingWallet?: string;
  }
}

export interface AttestationRequestRouteDeps {
  onchain: Pick<OnchainService, 'attestationRequest'>;
  apiKeys: ApiKeyService;
  walletSessions: Pick<WalletSessionService, 'resolve'>;
  windowMs: number;
  tier4: number;
  counters: BudgetCounters;
}

function bearerToken(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string' || !/^bearer\s+/i.test(authorization)) return undefined;
  return authorization.replace(/^bearer\s+/i, '').trim();
}

/**
 * `POST /v2/onchain/{chain_id}/attestations`, in a scope of its own: it accepts an API key (budgeted
 * as the key's other routes, the same counter) or the wallet session of `/registry/wallet/session`
 * (budgeted as that address's wallet routes). Both arrive as `Authorization: Bearer`, so a bearer
 * token is looked up as a session first, then as a key.
 */
export async function attestationRequestRoutes(instance: FastifyInstance, deps: AttestationRequestRouteDeps): Promise<void> {
  const app = typed(instance);
  const byKey = apiKeyAuthentication(deps.apiKeys);
  app.addHook('onRequest', (request, reply, done) => {
    const token = request.headers['x-api-key'] === undefined ? bearerToken(request) : undefined;
    if (token === undefined) return byKey(request, reply, done);
    deps.walletSessions.resolve(token).then((session) => {
      if (!session) return byKey(request, reply, done);
      request.attestingWallet = session.address;
      done();
    }, done);
  });
  const budget = { windowMs: deps.windowMs, tier4: deps.tier4, redis: deps.counters.redis };
  await registerRateLimit(app, {
    windowMs: deps.windowMs,
    key: (request) => (request.attestingWallet ? `wallet-address:${request.attestingWallet}` : `key:${request.caller?.prefix ?? 'anonymous'}`),
    max: (request) => (request.attestingWallet ? WALLET_ADDRESS_BUDGET : tierBudget(request.caller?.tier ?? 1, budget)),
    message: (limit, retryIn) => `Rate limit of ${limit} requests per ${Math.round(deps.windowMs / 60000)} minutes exceeded; retry in ${retryIn}.`,
    redis: deps.counters.redis,
    redisWatch: deps.counters.redisWatch,
    onRejected: (request) => deps.counters.onRejected?.(request.attestingWallet ? 'wallet' : (request.caller?.tier ?? 1)),
  });

  app.post(
    '/v2/onchain/:chain_id/attestations',
    {
      schema: {
        tags: ['v2'],
        summary: 'A signed attestation request for the verifier contract',
        description:
          'Scores the address now (recorded as `GET /v2/stamps/{scorer_id}/score/{address}` records it), reads the recipient\'s nonce and the ' +
          'fee from the chain\'s verifier, and answers one request attesting the score (score schema) and the address\'s live stamps ' +
          '(passport schema), signed by the attestation signer. Anyone may submit it with `verifyAndAttest(request, v, r, s)` ' +
          'and `msg.value` = `fee` before `deadline` (one hour). Integers are decimal text. Authentication: an API key with ' +
          '`read_scores`, or `Authorization: Bearer <token>` of the address\'s own wallet session (`POST /registry/wallet/session`; ' +
          'another address: 403). Unknown chain: 404 `chain_not_found`; RPC endpoint down, slow (OUTBOUND_TIMEOUT_MS) or answering ' +
          'garbage: 502 `upstream_unavailable` with nothing recorded; not configured: 503 `onchain_not_configured`.',
        security: [{ apiKey: [] }, { walletSession: [] }],
        params: ChainIdParams,
        body: AttestationRequestBody,
        response: { 200: AttestationRequestAnswerSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 502, 503) },
      },
    },
    async (request) => {
      const caller: AttestationCaller = request.attestingWallet
        ? { walletAddress: request.attestingWallet }
        : { accountId: requirePermission(request, 'read_scores').accountId };
      return deps.onchain.attestationRequest(request.params.chain_id, request.body.address.toLowerCase(), Number(request.body.scorer_id), caller);
    },
  );
}
