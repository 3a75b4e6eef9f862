import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';

/** `GET /api/v0.1/legacy/bounty?url=…`: a bounty from the legacy on-chain index. */
export function legacyBountyRoute(app: FastifyInstance, ctx: AppContext): void {
  void app;
  void ctx;
}
