import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorResponses } from '../../http/errors.js';
import { typed } from '../../http/typebox.js';
import { siweSite } from '../../sessions/siwe-checks.js';
import type { DevWalletService } from '../dev-wallet.js';
import { PortalSessionBody } from '../account.schema.js';
import { sessionBody } from './session.js';

export interface DevWalletRouteDeps {
  devWallet: DevWalletService;
  publicBaseUrl: string | null;
  /** The Set-Cookie value of a new portal session. */
  sessionCookie(request: FastifyRequest, token: string): string;
}

const DevWalletInfo = Type.Object(
  {
    available: Type.Boolean({ description: 'True only when STAMPGATE_ENV=development.' }),
    address: Type.Union([Type.String(), Type.Null()], { description: 'The test wallet\'s address; null when not available.' }),
  },
  { title: 'DevWalletInfo' },
);

/** The portal's sign-in with the development test wallet (see dev-wallet.ts); refused in production. */
export async function devWalletRoutes(instance: FastifyInstance, deps: DevWalletRouteDeps): Promise<void> {
  const app = typed(instance);
  const siteOf = (request: FastifyRequest) => siweSite(deps.publicBaseUrl ?? `${request.protocol}://${request.host}`);

  app.get(
    '/v2/account/dev-wallet',
    {
      schema: {
        tags: ['account'],
        summary: 'Whether this server offers the development test wallet',
        description: 'The portal shows its development sign-in only when `available` is true (STAMPGATE_ENV=development).',
        security: [],
        response: { 200: DevWalletInfo },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { available: deps.devWallet.available, address: await deps.devWallet.address() };
    },
  );

  app.post(
    '/v2/account/dev-wallet/session',
    {
      schema: {
        tags: ['account'],
        summary: 'Sign in to the portal with the development test wallet',
        description:
          'Development only: the server signs a Sign-In with Ethereum message with a test wallet whose key it keeps in DATA_DIR ' +
          '(`dev-portal-wallet.key`) and opens that wallet\'s portal session, as POST /v2/account/session does. In production it is ' +
          'refused (403 `permission_denied`) and nothing is created.',
        security: [],
        response: { 200: PortalSessionBody, ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      const { token, session } = await deps.devWallet.signIn(siteOf(request));
      reply.header('set-cookie', deps.sessionCookie(request, token));
      reply.header('cache-control', 'no-store');
      return sessionBody(session);
    },
  );
}
