import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { apiKeyAuthentication } from '../../http/auth.js';
import type { Metrics } from '../../http/metrics.js';
import { registerKeyRateLimit } from '../../http/rate-limit.js';
import { scoreRoutes } from './score.js';
import { stakeRoutes } from './stake.js';
import { stampsRoutes } from './stamps.js';
import { signingMessageRoute } from './signing-message.js';
import { submitPassportRoute } from './submit-passport.js';

/** The scoring service: every route here needs an API key and spends its rate budget. */
export async function scoringRoutes(app: FastifyInstance, ctx: AppContext, metrics: Metrics | null): Promise<void> {
  app.addHook('onRequest', apiKeyAuthentication(ctx.apiKeys));
  await registerKeyRateLimit(app, {
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
}
