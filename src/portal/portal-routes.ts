import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import type { Metrics } from '../metrics.js';
import { devWalletService } from './dev-wallet.js';
import { accountRoutes } from './routes/account.js';
import { devWalletRoutes } from './routes/dev-wallet.js';
import { portalPageRoutes } from './routes/portal-page.js';
import { portalSessionRoutes } from './routes/session.js';
import { sessionCookie } from './session-auth.js';

/** The portal's page, its sign-in and the account routes, each in its own scope. */
export async function portalRoutes(app: FastifyInstance, ctx: AppContext, metrics: Metrics | null): Promise<void> {
  await app.register(async (scope) => portalSessionRoutes(scope, ctx, metrics));
  await app.register(async (scope) => accountRoutes(scope, ctx, metrics));
  await app.register(async (scope) =>
    devWalletRoutes(scope, {
      devWallet: devWalletService(ctx.config, ctx.portal.sessions),
      publicBaseUrl: ctx.config.publicBaseUrl,
      sessionCookie: (request, token) => sessionCookie(ctx.config, request, token, ctx.config.portalSessionTtlSeconds),
    }),
  );
  await app.register(async (scope) => portalPageRoutes(scope, ctx.config.portalAssetsDir));
}
