import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './app-context.js';
import { registerErrorHandling } from './http/errors.js';
import { registerHealthRoutes } from './http/health.js';
import { registerOpenApi } from './http/openapi.js';
import { scoringRoutes } from './scoring/routes/index.js';
import { packageVersion } from './version.js';

export interface BuildOptions {
  /** Pino logger options, or false for none (tests). */
  logger?: boolean | Record<string, unknown>;
}

export async function buildServer(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? { level: ctx.config.logLevel },
    bodyLimit: ctx.config.bodyLimitBytes,
    trustProxy: true,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    },
    ajv: {
      customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  registerErrorHandling(app);
  await registerOpenApi(app, packageVersion);
  registerHealthRoutes(app, ctx.database);
  await app.register(async (scope) => scoringRoutes(scope, ctx));
  return app;
}
