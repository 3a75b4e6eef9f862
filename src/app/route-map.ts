import type { FastifyInstance } from 'fastify';
import { budgetCounters } from '../http/rate-limit.js';
import { portalPageRoutes } from '../portal/routes/portal-page.js';
import { devWalletService } from '../portal/dev-wallet.js';
import { accountRoutes } from '../portal/routes/account.js';
import { devWalletRoutes } from '../portal/routes/dev-wallet.js';
import { portalSessionRoutes } from '../portal/routes/session.js';
import { portalSessionAuthentication, sessionCookie } from '../portal/session-auth.js';
import { publicDataRoutes } from '../publicdata/routes/index.js';
import { registerApiKeyScope } from '../scoring/accounts/key-rate-limit.js';
import { batchRoutes } from '../scoring/batches/routes/batches.js';
import { scoreRoutes } from '../scoring/scores/routes/score.js';
import { signingMessageRoute } from '../scoring/scores/routes/signing-message.js';
import { submitPassportRoute } from '../scoring/scores/routes/submit-passport.js';
import { v2ScoreRoutes } from '../scoring/scores/routes/v2-score.js';
import { loadIconFiles } from '../scoring/stamps/icons.js';
import { iconRoutes } from '../scoring/stamps/routes/icons.js';
import { stampsRoutes } from '../scoring/stamps/routes/stamps.js';
import { v2StampsRoutes } from '../scoring/stamps/routes/v2-stamps.js';
import { walletRoutes } from '../scoring/wallet/routes/wallet.js';
import { stakeEventRoutes } from '../staking/routes/stake-events.js';
import { stakeRoutes } from '../staking/routes/stake.js';
import { modelsRoutes } from '../models/routes/models.js';
import { attestationRequestRoutes } from '../onchain/routes/attestation-requests.js';
import { chainsRoutes } from '../onchain/routes/chains.js';
import { onchainScoresRoutes } from '../onchain/routes/onchain-scores.js';
import { scoreAttestationRoutes } from '../onchain/routes/score-attestation.js';
import { eventFeedRoutes } from '../webhooks/routes/events.js';
import { webhookRoutes } from '../webhooks/routes/webhooks.js';
import type { AppContext } from './container.js';
import type { Metrics } from './metrics.js';

/**
 * Every route plugin of the service, with the paths it serves and how its scope is guarded. Each
 * plugin is given only the services and settings it declares; the scopes keep each surface's
 * authentication and budget to its own routes (an API key's hook never runs on a public list).
 *
 * | scope                          | plugin              | paths                                                        |
 * |--------------------------------|---------------------|--------------------------------------------------------------|
 * | portal sign-in, per IP         | portalSessionRoutes | /v2/account/siwe-nonce, /v2/account/session                  |
 * | API key or portal cookie       | accountRoutes       | /v2/account, /v2/account/keys…, /v2/account/scorers…         |
 * | development only               | devWalletRoutes     | /v2/account/dev-wallet[/session]                             |
 * | none (static files)            | portalPageRoutes    | /portal/…                                                    |
 * | API key or portal cookie       | signingMessageRoute | /registry/signing-message                                    |
 * |   (key + account budgets)      | submitPassportRoute | /registry/submit-passport                                    |
 * |                                | scoreRoutes         | /registry/score/{scorer_id}[/{address}]                      |
 * |                                | stakeRoutes         | /registry/{token}-stake/{address}                            |
 * |                                | stampsRoutes        | /registry/stamps/{address}, /registry/stamp-metadata         |
 * |                                | v2ScoreRoutes       | /v2/stamps/{scorer_id}/score/{address}[/history]             |
 * |                                | v2StampsRoutes      | /v2/stamps/{address}, /v2/stamps/metadata                    |
 * |                                | webhookRoutes       | /v2/scorers/{id}/webhooks, /v2/webhooks/{id}…                |
 * |                                | eventFeedRoutes     | /v2/scorers/{id}/events                                      |
 * |                                | modelsRoutes        | /v2/models/score/{address}                                   |
 * |                                | scoreAttestationRoutes | /v2/stamps/{scorer_id}/score/{address}/attestation        |
 * |                                | onchainScoresRoutes | /v2/onchain/scores/{scorer_id}/{address}                     |
 * |                                | batchRoutes         | /v2/stamps/{scorer_id}/scores, /v2/scorers/{id}/batches, /v2/batches/{id}… |
 * | wallet session, per IP/address | walletRoutes        | /registry/wallet/…                                           |
 * | API key or wallet session      | attestationRequestRoutes | /v2/onchain/{chain_id}/attestations                     |
 * | none, per IP                   | chainsRoutes        | /v2/onchain/chains                                           |
 * | none, per IP                   | stakeEventRoutes    | /registry/{token}-stake/{address}/{round_id}                 |
 * | none (static files)            | iconRoutes          | /static/icons/…                                              |
 * | none, per IP                   | publicDataRoutes    | /api/v0.1/…, /grants/…                                       |
 *
 * Health, OpenAPI and metrics are the server's own (server.ts).
 */
export async function registerRoutes(app: FastifyInstance, ctx: AppContext, metrics: Metrics | null): Promise<void> {
  const { config } = ctx;
  const counters = budgetCounters(ctx.redis, ctx.redisWatch, metrics ? (budget) => metrics.rateLimitRejected(budget) : undefined);
  if (config.scoringApiEnabled) {
    const keyScope = {
      apiKeys: ctx.apiKeys,
      withoutKey: portalSessionAuthentication(config, ctx.portal.sessions, ctx.apiKeys.accountBudget),
      windowMs: config.rateLimitWindowMs,
      tier4: config.rateLimitTier4,
      counters,
    };
    await app.register(async (scope) => portalSessionRoutes(scope, { sessions: ctx.portal.sessions, config, counters, accountBudget: ctx.apiKeys.accountBudget }));
    await app.register(async (scope) => accountRoutes(scope, { account: ctx.portal.account, keyScope }));
    await app.register(async (scope) =>
      devWalletRoutes(scope, {
        devWallet: devWalletService(config, ctx.portal.sessions),
        publicBaseUrl: config.publicBaseUrl,
        sessionCookie: (request, token) => sessionCookie(config, request, token, config.portalSessionTtlSeconds),
      }),
    );
    await app.register(async (scope) => portalPageRoutes(scope, config.portalAssetsDir));
    await app.register(async (scope) => {
      const budget = await registerApiKeyScope(scope, keyScope);
      signingMessageRoute(scope, ctx);
      submitPassportRoute(scope, ctx);
      scoreRoutes(scope, ctx);
      stakeRoutes(scope, { stakes: ctx.staking.stakes, governanceToken: config.governanceToken });
      stampsRoutes(scope, ctx);
      v2ScoreRoutes(scope, ctx);
      v2StampsRoutes(scope, ctx);
      webhookRoutes(scope, { endpoints: ctx.webhooks.endpoints, wakeDeliveries: () => ctx.webhooks.worker.notify() });
      eventFeedRoutes(scope, { feed: ctx.webhooks.feed });
      modelsRoutes(scope, { models: ctx.models });
      scoreAttestationRoutes(scope, { onchain: ctx.onchain.service });
      onchainScoresRoutes(scope, { onchain: ctx.onchain.service });
      await scope.register(async (batches) => batchRoutes(batches, { service: ctx.batches.service, resultStreams: ctx.batches.resultStreams, uploads: ctx.batches.uploads, config, budget }));
    });
    await app.register(async (scope) => walletRoutes(scope, { wallet: ctx.wallet, issuers: ctx.issuers, config, counters }));
    await app.register(async (scope) =>
      attestationRequestRoutes(scope, {
        onchain: ctx.onchain.service,
        apiKeys: ctx.apiKeys,
        walletSessions: ctx.wallet.sessions,
        windowMs: config.rateLimitWindowMs,
        tier4: config.rateLimitTier4,
        counters,
      }),
    );
    await app.register(async (scope) => chainsRoutes(scope, { onchain: ctx.onchain.service, counters }));
    await app.register(async (scope) =>
      stakeEventRoutes(scope, {
        events: ctx.staking.events,
        governanceToken: config.governanceToken,
        perMinute: config.stakeEventsRateLimitPerMinute,
        counters,
      }),
    );
    const iconFiles = loadIconFiles();
    await app.register(async (scope) => iconRoutes(scope, iconFiles));
  }
  if (config.publicDataApiEnabled) {
    const { publicData, redis, redisWatch } = ctx;
    const onRateLimitRejected = () => counters.onRejected?.('public');
    await app.register(async (scope) => publicDataRoutes(scope, { publicData, config, redis, redisWatch, onRateLimitRejected }));
  }
}
