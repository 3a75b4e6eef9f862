import Fastify, { type FastifyInstance } from 'fastify';
import type { AppContext } from './container.js';
import { registerErrorHandling } from '../http/errors.js';
import { registerHealthRoutes } from '../http/health.js';
import { registerLifecycle, ServiceLifecycle } from '../http/lifecycle.js';
import { createMetrics } from './metrics.js';

/**
 * What a `stampgate worker` serves for monitoring when WORKER_PORT is set: its own `/metrics`
 * (job latency and outcomes are counted where jobs run, so an API process cannot report them)
 * and the health checks. No API routes.
 */
export async function buildWorkerServer(ctx: AppContext, lifecycle?: ServiceLifecycle): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, return503OnClosing: false });
  registerErrorHandling(app, { retryAfterSeconds: ctx.config.retryAfterSeconds, availability: ctx.database.availability });
  // Also names each answer's request id.
  registerLifecycle(app, lifecycle ?? new ServiceLifecycle(), ctx.config.retryAfterSeconds);
  if (ctx.config.metricsEnabled) createMetrics(ctx).register(app);
  registerHealthRoutes(app, ctx.database, lifecycle);
  await app.ready();
  return app;
}
