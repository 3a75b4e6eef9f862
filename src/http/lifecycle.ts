import type { FastifyInstance } from 'fastify';
import { databaseUnavailableError, defaultRetryAfterSeconds, shuttingDownError } from '../errors.js';

export type LifecycleState = 'starting' | 'serving' | 'draining';

/**
 * Where an HTTP server is in its life: `starting` while the process waits for the database
 * (liveness up, readiness down, other requests answered 503), `serving`, and `draining` after
 * SIGTERM/SIGINT (requests already running finish; new ones are refused with 503 and the
 * connection is closed after each answer).
 */
export class ServiceLifecycle {
  state: LifecycleState;

  constructor(state: LifecycleState = 'serving') {
    this.state = state;
  }
}

export function registerLifecycle(app: FastifyInstance, lifecycle: ServiceLifecycle, retryAfterSeconds = defaultRetryAfterSeconds): void {
  // Callback hooks (here and on other per-request paths): an async one costs a promise and a
  // microtask on every request of the service.
  app.addHook('onRequest', (request, _reply, done) => {
    if (lifecycle.state === 'draining') return done(shuttingDownError(retryAfterSeconds));
    if (lifecycle.state === 'starting' && !request.url.startsWith('/health/')) return done(databaseUnavailableError(retryAfterSeconds));
    done();
  });
  // Every answer names its request (the caller's X-Request-Id or ours). One that was running when
  // the drain began is answered normally, but its connection is not kept open for another. One
  // hook for both: each hook a request passes through costs every request.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    if (lifecycle.state === 'draining') reply.header('connection', 'close');
    done(null, payload);
  });
}

/**
 * Graceful stop of an HTTP server: refuse new requests, close idle keep-alive connections now
 * (Fastify's close does, and stops listening), let requests in progress finish within
 * `budgetMs`, then cut whatever connection is left.
 */
export async function drainServer(app: FastifyInstance, lifecycle: ServiceLifecycle, budgetMs: number): Promise<void> {
  lifecycle.state = 'draining';
  const cut = setTimeout(() => app.server.closeAllConnections(), budgetMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
