import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { finishOperations } from './openapi-operations.js';

/**
 * The served document is OpenAPI 3.1 (its schemas are JSON Schema, `examples` included). `servers`
 * is PUBLIC_BASE_URL when set, else `/`: the document's own origin.
 */
export async function registerOpenApi(app: FastifyInstance, version: string, publicBaseUrl: string | null = null): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      servers: [{ url: publicBaseUrl ?? '/' }],
      info: {
        title: 'Stampgate',
        version,
        license: { name: 'MIT', identifier: 'MIT' },
        description:
          'Passport scoring service (`/registry/…`, authenticated with `X-API-KEY`), wallet-side stamp writing ' +
          '(`/registry/wallet/…`, a Sign-In with Ethereum session token) and the public data API (`/api/v0.1/…`). ' +
          'Every error is `{"detail","code"}`.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
          walletSession: {
            type: 'http',
            scheme: 'bearer',
            description: 'Session token from POST /registry/wallet/session (Sign-In with Ethereum).',
          },
          portalSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'stampgate_portal',
            description: 'Developer portal session cookie from POST /v2/account/session; state changes also need the `X-CSRF-Token` header.',
          },
        },
      },
      tags: [
        { name: 'scoring', description: 'Passport scoring service' },
        { name: 'v2', description: 'The v2 read API: synchronous scoring, score history, stamps (same API keys and rate limits as v1)' },
        { name: 'wallet', description: 'A wallet owner signs in and writes its own stamps' },
        { name: 'public data', description: 'Grants, bounties, contributor exports and the legacy bounty read' },
        { name: 'account', description: 'Account management (scorers, API keys, usage) for the developer portal and API keys with create_scorers' },
        { name: 'health', description: 'Liveness and readiness' },
      ],
    },
    transformObject: (documents) => {
      const document = 'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject;
      finishOperations(document as Parameters<typeof finishOperations>[0]);
      return document;
    },
    refResolver: {
      // Shared schemas keep their $id as the component name (e.g. `ErrorBody`).
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/docs' });
}
