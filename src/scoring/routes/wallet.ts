import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';

/** Wallet-side stamp writing: SIWE sign-in and the session-token routes (no API key). */
export async function walletRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  void app;
  void ctx;
}
