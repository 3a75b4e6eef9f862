import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { apiKeyAuthentication } from './accounts/api-key-auth.js';
import type { Metrics } from '../metrics.js';
import { registerKeyRateLimit } from './accounts/key-rate-limit.js';
import { scoreRoutes } from './scores/routes/score.js';
import { stakeRoutes } from '../staking/routes/stake.js';
import { stampsRoutes } from './stamps/routes/stamps.js';
import { signingMessageRoute } from './scores/routes/signing-message.js';
import { submitPassportRoute } from './scores/routes/submit-passport.js';
import { v2ScoreRoutes } from './scores/routes/v2-score.js';
import { v2StampsRoutes } from './stamps/routes/v2-stamps.js';
import { webhookRoutes } from '../webhooks/routes/webhooks.js';
import { eventFeedRoutes } from '../webhooks/routes/events.js';
import { batchRoutes } from './batches/routes/batches.js';
import { portalSessionAuthentication } from '../portal/session-auth.js';
import { modelsRoutes } from '../models/routes/models.js';

/** The scoring service: every route here needs an API key (or a portal session) and spends its rate budget. */
export async function scoringRoutes(app: FastifyInstance, ctx: AppContext, metrics: Metrics | null): Promise<void> {
  app.addHook('onRequest', apiKeyAuthentication(ctx.apiKeys, portalSessionAuthentication(ctx.config, ctx.portal.sessions)));
  const keyBudget = await registerKeyRateLimit(app, {
    windowMs: ctx.config.rateLimitWindowMs,
    tier4: ctx.config.rateLimitTier4,
    redis: ctx.redis,
    redisWatch: ctx.redisWatch,
    onRejected: (tier) => metrics?.rateLimitRejected(tier),
  });
  signingMessageRoute(app, ctx);
  submitPassportRoute(app, ctx);
  scoreRoutes(app, ctx);
  stakeRoutes(app, ctx);
  stampsRoutes(app, ctx);
  v2ScoreRoutes(app, ctx);
  v2StampsRoutes(app, ctx);
  modelsRoutes(app, { models: ctx.models });
  webhookRoutes(app, ctx);
  eventFeedRoutes(app, ctx);
  await app.register(async (scope) => batchRoutes(scope, ctx, keyBudget));
}
