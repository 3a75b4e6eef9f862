import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { checkPublicDataConfig } from '../public-data-services.js';
import { bountiesRoute } from './bounties.js';
import { exportRoutes } from './exports.js';
import { grantsRoute } from './grants.js';
import { legacyBountyRoute } from './legacy-bounty.js';
import { loginRoutes } from './login.js';

/** The public data API: `/api/v0.1/…` and `/grants/…`. */
export async function publicDataRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  checkPublicDataConfig(ctx.config);
  // Signed cookies (login session, login state) in this scope only.
  await app.register(cookie, { secret: ctx.publicData.sessionSecret });
  bountiesRoute(app, ctx);
  grantsRoute(app, ctx);
  exportRoutes(app, ctx);
  loginRoutes(app, ctx);
  legacyBountyRoute(app, ctx);
}
