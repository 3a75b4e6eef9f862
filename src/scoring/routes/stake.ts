import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';

/** `GET /registry/{token}-stake/{address}` and `govtoken-stake`. */
export function stakeRoutes(app: FastifyInstance, ctx: AppContext): void {
  void app;
  void ctx;
}
