import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { legacyBountyRoute } from './legacy-bounty.js';

/** The public data API: `/api/v0.1/…` and `/grants/…`. */
export async function publicDataRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  legacyBountyRoute(app, ctx);
}
