import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import { AppError } from '../../errors.js';
import { errorResponses } from '../../http/errors.js';
import { type BudgetCounters, registerIpRateLimit } from '../../http/rate-limit.js';
import { typed } from '../../http/typebox.js';
import { formatScoringTimestamp } from '../../scoring/timestamps.js';
import { siweSite } from '../../sessions/siwe-checks.js';
import type { PortalSession, PortalSessionService } from '../portal-sessions.service.js';
import { type AccountBudgetOf, type PortalSite, portalSessionAuthentication, sessionCookie } from '../session-auth.js';
import { PortalSessionBody, PortalSiweNonce, SignInBody } from '../account.schema.js';

/** Sign-in attempts and session reads per minute from one client address. */
export const PORTAL_SIGN_IN_IP_BUDGET = 60;

const open: Record<string, string[]>[] = [];
const cookieSecurity: Record<string, string[]>[] = [{ portalSession: [] }];

export function sessionBody(session: PortalSession) {
  return {
    address: session.address,
    account_id: String(session.accountId),
    csrf_token: session.csrfToken,
    expires_at: formatScoringTimestamp(session.expiresAt),
  };
}

/** What the portal's sign-in routes use. */
export interface PortalSessionRouteDeps {
  sessions: PortalSessionService;
  config: PortalSite & Pick<Config, 'siweAllowedChainIds' | 'portalSessionTtlSeconds'>;
  counters: BudgetCounters;
  /** An account's budget, which a session's caller carries. */
  accountBudget: AccountBudgetOf;
}

/** Developer portal sign-in with Ethereum: a nonce, the signed message for a session cookie, the session, sign-out. */
export async function portalSessionRoutes(instance: FastifyInstance, deps: PortalSessionRouteDeps): Promise<void> {
  const app = typed(instance);
  const { sessions } = deps;
  const siteOf = (request: FastifyRequest) => siweSite(deps.config.publicBaseUrl ?? `${request.protocol}://${request.host}`);
  app.addHook('onRequest', portalSessionAuthentication(deps.config, sessions, deps.accountBudget));
  await registerIpRateLimit(app, {
    name: 'portal',
    max: PORTAL_SIGN_IN_IP_BUDGET,
    windowMs: 60_000,
    redis: deps.counters.redis,
    redisWatch: deps.counters.redisWatch,
    onRejected: () => deps.counters.onRejected?.('portal'),
  });

  app.get(
    '/v2/account/siwe-nonce',
    {
      schema: {
        tags: ['account'],
        summary: 'A nonce and the fields of a developer portal sign-in message',
        description:
          'Build an EIP-4361 message with these fields, the wallet\'s address, Version 1, Issued At and an Expiration Time, have ' +
          'the wallet sign it (personal_sign) and send both to POST /v2/account/session. Single-use; expires at `expiresAt`.',
        security: open,
        response: { 200: PortalSiweNonce, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { ...(await sessions.issueNonce(siteOf(request))), chainIds: deps.config.siweAllowedChainIds };
    },
  );

  app.post(
    '/v2/account/session',
    {
      bodyLimit: 32 * 1024,
      schema: {
        tags: ['account'],
        summary: 'Sign in to the developer portal with Ethereum',
        description:
          'Checked like the wallet sign-in (domain byte for byte, URI on this origin, allowed Chain ID, real dates, an Expiration ' +
          'Time, a single-use nonce from GET /v2/account/siwe-nonce) and the signature must be the message address\'s. The first ' +
          'sign-in of a wallet creates the account it owns unless PORTAL_SIGNUP=closed (then 403). Sets the session cookie ' +
          '(httpOnly, SameSite=Lax, Secure over https); the answer carries the CSRF token to send as `X-CSRF-Token` on every ' +
          'state change. A refused sign-in consumes nothing.',
        security: open,
        body: SignInBody,
        response: { 200: PortalSessionBody, ...errorResponses(400, 403, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { token, session } = await sessions.signIn(request.body, siteOf(request));
      reply.header('set-cookie', sessionCookie(deps.config, request, token, deps.config.portalSessionTtlSeconds));
      reply.header('cache-control', 'no-store');
      return sessionBody(session);
    },
  );

  app.get(
    '/v2/account/session',
    {
      schema: {
        tags: ['account'],
        summary: 'The portal session of the cookie, with its CSRF token',
        security: cookieSecurity,
        response: { 200: PortalSessionBody, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      if (!request.portalSession) throw new AppError('invalid_session', 'Not signed in to the portal (no live session cookie).');
      reply.header('cache-control', 'no-store');
      return sessionBody(request.portalSession);
    },
  );

  app.delete(
    '/v2/account/session',
    {
      schema: {
        tags: ['account'],
        summary: 'Sign out of the portal',
        description: 'Needs the `X-CSRF-Token` header. The session ends at once and the cookie is cleared.',
        security: cookieSecurity,
        response: { 204: Type.Null({ description: 'Signed out.' }), ...errorResponses(401, 403, 429) },
      },
    },
    async (request, reply) => {
      if (!request.portalSession || request.portalToken === undefined) {
        throw new AppError('invalid_session', 'Not signed in to the portal (no live session cookie with its X-CSRF-Token).');
      }
      await sessions.signOut(request.portalToken);
      reply.header('set-cookie', sessionCookie(deps.config, request, '', 0));
      return reply.code(204).send(null);
    },
  );
}
