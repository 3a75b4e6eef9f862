import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createLogger } from '../logger.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './container.js';
import { checkConfig, type Config, ConfigError, HOST_REQUIRED } from '../config/index.js';
import { registerEmptyStringsAsAbsent } from '../http/empty-strings.js';
import { answerClientError, registerErrorHandling, sendFrameworkError } from '../http/errors.js';
import { registerHealthRoutes } from '../http/health.js';
import { registerLandingPage } from '../http/landing.js';
import { registerJsonBodyParser } from '../http/json-body.js';
import { registerLifecycle, ServiceLifecycle } from '../http/lifecycle.js';
import { createMetrics } from './metrics.js';
import { registerOpenApi } from '../http/openapi.js';
import { keepFreedMemoryInHeap } from '../http/allocator.js';
import cors from '@fastify/cors';
import { packageVersion } from '../version.js';
import { keyUsageObserver } from '../portal/session-auth.js';
import { registerRoutes } from './route-map.js';
import { observeResponses, type ResponseObserver } from '../http/response-observers.js';
import { CoalescedResponse } from '../http/coalesced-writes.js';
import { buildResponseSerializer } from '../http/response-serializers.js';
import { buildRequestValidator, requestAjvOptions } from '../http/request-validators.js';

export interface BuildOptions {
  /** The process logger, or false for none (tests); by default a pino logger at LOG_LEVEL. */
  logger?: FastifyBaseLogger | false;
  /** Start-up and shutdown state (`serve` passes its own; by default the server is serving). */
  lifecycle?: ServiceLifecycle;
}

export async function buildServer(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  // `stampgate serve` has checked these while loading its configuration (every problem at once);
  // tools and tests build the API from a configuration loaded for no particular purpose.
  checkConfig(ctx.config, ['api']);
  keepFreedMemoryInHeap();
  const app = Fastify({
    ...(options.logger === false ? { logger: false } : { loggerInstance: options.logger ?? createLogger(ctx.config.logLevel) }),
    bodyLimit: ctx.config.bodyLimitBytes,
    // Forwarded headers only from the configured proxies: from anyone else they would let each
    // request pick its own client address and so its own per-IP budget.
    trustProxy: ctx.config.trustProxy.length > 0 ? ctx.config.trustProxy : false,
    ...serverOptions(ctx.config),
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    },
    // Coercion is for query strings, path parameters and headers (text); JSON bodies are checked
    // without it (buildRequestValidator).
    ajv: requestAjvOptions,
    // Past Fastify's default of 100 a long path parameter would be a 414 from the router instead of
    // the parameter's own validation error (an overlong address is an invalid address).
    routerOptions: { maxParamLength: 16_384 },
    frameworkErrors: sendFrameworkError,
    clientErrorHandler: answerClientError,
    // Requests that arrive while draining are refused by registerLifecycle, in the standard shape.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Present on every request from its construction (undefined until a hook sets them): one object
  // shape for every request, where a property added by a hook would make the property reads of
  // every later hook and of Fastify itself polymorphic.
  app.decorateRequest('caller', undefined);
  app.decorateRequest('portalSession', undefined);
  app.decorateRequest('portalToken', undefined);
  // Bodies are JSON only; without this Fastify would hand a text/plain body to the JSON routes as a string.
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app, ctx.config.bodyMaxDepth);

  registerErrorHandling(app, { retryAfterSeconds: ctx.config.retryAfterSeconds, availability: ctx.database.availability });
  registerLifecycle(app, options.lifecycle ?? new ServiceLifecycle(), ctx.config.retryAfterSeconds);
  if (ctx.config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: ctx.config.corsOrigins.includes('*') ? true : ctx.config.corsOrigins,
      methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      allowedHeaders: ['Content-Type', 'X-API-KEY', 'Authorization', 'If-None-Match', 'X-Request-Id'],
      exposedHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'ETag', 'X-Request-Id', 'X-Total-Count', 'Link'],
      maxAge: 600,
    });
  }
  await registerOpenApi(app, packageVersion, ctx.config.publicBaseUrl);
  const metrics = ctx.config.metricsEnabled ? createMetrics(ctx) : null;
  // One onResponse hook for both: request metrics, then every API key's requests counted per day.
  const observers: ResponseObserver[] = [];
  if (metrics) observers.push(metrics.observeResponse);
  if (ctx.config.scoringApiEnabled) observers.push(keyUsageObserver(ctx.portal.usage));
  observeResponses(app, observers);
  if (metrics) {
    if (ctx.config.metricsPublic) metrics.serve(app);
    if (ctx.config.metricsPort !== null) {
      const listener = Fastify({ logger: false, ...serverOptions(ctx.config) });
      registerErrorHandling(listener);
      metrics.serve(listener);
      metricsListeners.set(app, listener);
      app.addHook('onClose', async () => listener.close());
    }
  }
  // Every scope: an empty optional query parameter or body field means "not given" (decisions.md).
  registerEmptyStringsAsAbsent(app);
  registerHealthRoutes(app, ctx.database, options.lifecycle, () => {
    const notes = [ctx.workerWatch.absence, ctx.onchain.push.watch?.absence ?? null];
    return notes.filter((note) => note !== null);
  });
  registerLandingPage(app, { portal: ctx.config.scoringApiEnabled });
  await registerRoutes(app, ctx, metrics);
  return app;
}

const metricsListeners = new WeakMap<FastifyInstance, FastifyInstance>();

/** The listener of METRICS_PORT that `buildServer` made for `app`, if any. */
export function metricsListenerOf(app: FastifyInstance): FastifyInstance | null {
  return metricsListeners.get(app) ?? null;
}

/**
 * The interface to bind. Production has no default: an operator states whether the service is
 * reachable from other machines (`0.0.0.0` behind a proxy or in a container) or not.
 */
export function listenHost(config: Config): string {
  if (config.host !== null) return config.host;
  // Reached only by a tool that binds a configuration not loaded to serve: `serve` and `worker` refuse it at load.
  if (config.env === 'production') throw new ConfigError([HOST_REQUIRED]);
  return '127.0.0.1';
}

/** Binds the server, and its metrics listener (METRICS_PORT, on the same interface) when it has one. */
export async function listen(app: FastifyInstance, config: Config): Promise<void> {
  const host = listenHost(config);
  await app.listen({ port: config.port, host });
  await metricsListenerOf(app)?.listen({ port: config.metricsPort ?? 0, host });
}

/**
 * Node's server options. Timeouts: without them a client that sends its headers a byte at a time,
 * or never finishes its body, holds a connection (and its memory) for as long as it likes. Node
 * looks for overdue connections every `connectionsCheckingInterval` (30 s by default), which
 * would stretch a 10 s headers timeout to 40 s: look at least every second. Responses: the
 * answers of one event-loop turn are written together (CoalescedResponse). HEADERS_TIMEOUT_MS is
 * at most REQUEST_TIMEOUT_MS (a configuration rule, checked by `buildServer`).
 */
function serverOptions(config: Config) {
  return {
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
      ServerResponse: CoalescedResponse,
    },
    schemaController: { compilersFactory: { buildSerializer: buildResponseSerializer, buildValidator: buildRequestValidator } },
  };
}
