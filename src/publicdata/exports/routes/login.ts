import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../../app-context.js';
import { errorResponses } from '../../../http/errors.js';
import { safeNext } from '../oauth.js';
import { QueryText } from '../../routes/schemas.js';
import { baseUrlOf } from '../../routes/http-cache.js';
import { clearPendingLogin, clearSession, readPendingLogin, writePendingLogin, writeSession } from './session.js';

const Next = Type.Object({
  next: Type.Optional(QueryText(2000, 'Local path to return to afterwards (default /grants/grants.json).')),
});

const Redirect = Type.Null({ description: 'Redirect (see Location).' });

/** Browser login of grant team members with the code-hosting account (OAuth 2.0 authorization code + state + PKCE). */
export function loginRoutes(app: FastifyInstance, ctx: AppContext): void {
  const callbackUrl = (request: Parameters<typeof baseUrlOf>[1]) => `${baseUrlOf(ctx, request)}/grants/login/callback`;

  app.get<{ Querystring: { next?: string } }>(
    '/grants/login',
    {
      schema: {
        tags: ['public data'],
        summary: 'Log in with the code-hosting account',
        description: 'Redirects to the provider’s authorization page; 404 when OAUTH_CLIENT_ID is unset.',
        querystring: Next,
        response: { 302: Redirect, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const { authorizeUrl, pending } = ctx.publicData.login.start(request.query.next, callbackUrl(request));
      writePendingLogin(ctx, request, reply, pending);
      return reply.header('cache-control', 'no-store').redirect(authorizeUrl, 302);
    },
  );

  app.get<{ Querystring: { code?: string; state?: string; error?: string } }>(
    '/grants/login/callback',
    {
      schema: {
        tags: ['public data'],
        summary: 'Where the provider sends the browser back',
        description:
          'Checks state, exchanges the code, reads the user’s login (`login` or `preferred_username`), sets the signed ' +
          'HttpOnly session cookie and redirects to `next`.',
        querystring: Type.Object({
          code: Type.Optional(QueryText(2000, 'Authorization code from the provider.')),
          state: Type.Optional(QueryText(200, 'The state this server sent.')),
          error: Type.Optional(QueryText(2000, 'Why the provider did not log the user in.')),
        }),
        response: { 302: Redirect, ...errorResponses(400, 401, 404, 502) },
      },
    },
    async (request, reply) => {
      const pending = readPendingLogin(request);
      clearPendingLogin(reply);
      const session = await ctx.publicData.login.finish(request.query, pending, callbackUrl(request));
      writeSession(ctx, request, reply, session);
      return reply.header('cache-control', 'no-store').redirect(pending!.next, 302);
    },
  );

  app.get<{ Querystring: { next?: string } }>(
    '/grants/logout',
    {
      schema: {
        tags: ['public data'],
        summary: 'Log out',
        description: 'Clears the session cookie and redirects to `next`.',
        querystring: Next,
        response: { 302: Redirect },
      },
    },
    async (request, reply) => {
      clearSession(reply);
      return reply.header('cache-control', 'no-store').redirect(safeNext(request.query.next), 302);
    },
  );
}
