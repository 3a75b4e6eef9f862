import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { Config } from '../../../config/index.js';
import type { PublicDataModule } from '../../publicdata.module.js';
import { AppError } from '../../../errors.js';
import { errorResponses } from '../../../http/errors.js';
import { SESSION_TTL_MS, safeNext } from '../oauth.js';
import { QueryText } from '../../publicdata.schema.js';
import { baseUrlOf } from '../../routes/http-cache.js';
import { clearPendingLogin, clearSession, readPendingLogin, readSession, writePendingLogin, writeSession } from './session.js';

const Next = Type.Object({
  next: Type.Optional(QueryText(2000, 'Local path to return to afterwards (default /grants/grants.json).')),
});

const Redirect = Type.Null({ description: 'Redirect (see Location).' });

const RotatedCredentials = Type.Object(
  {
    api_key: Type.Object({
      _key: Type.String({ description: 'The new export key.' }),
      _secret: Type.String({ description: 'The new secret, shown only here: only its hash is kept.' }),
    }),
  },
  { title: 'RotatedExportCredentials' },
);

/** What the login routes read. */
export interface LoginRoutesDeps {
  publicData: Pick<PublicDataModule, 'login' | 'exportAuth'>;
  config: Pick<Config, 'publicBaseUrl'>;
}

/**
 * CSRF defence of the cookie-session POSTs (with the SameSite=Lax cookie): the browser's
 * Origin must be this service's own origin (PUBLIC_BASE_URL's, else the request's scheme and
 * Host). Browsers always send Origin on a POST, so a missing one is refused too.
 */
function requireSameOrigin(deps: LoginRoutesDeps, request: FastifyRequest): void {
  const origin = request.headers.origin;
  let expected: string;
  try {
    expected = new URL(baseUrlOf(deps, request)).origin;
  } catch {
    throw new AppError('invalid_request', 'The request\'s Host header does not name a valid host.');
  }
  if (origin !== expected) {
    throw new AppError('permission_denied', `This form must be sent from ${expected} (the request's Origin header is ${origin === undefined ? 'missing' : 'another site'}).`);
  }
}

/** GET on a path that changes state: 405 with `Allow: POST`, nothing changed. */
function postOnly(app: FastifyInstance, path: string, summary: string): void {
  app.get(
    path,
    {
      schema: { tags: ['public data'], summary, description: 'Only POST is accepted here (it changes state).', response: errorResponses(405) },
    },
    async (_request, reply) => {
      reply.header('allow', 'POST');
      throw new AppError('method_not_allowed', `${path} changes state: send a POST (a form button), not a GET.`);
    },
  );
}

/** Browser login of grant team members with the code-hosting account (OAuth 2.0 authorization code + state + PKCE). */
export function loginRoutes(instance: FastifyInstance, deps: LoginRoutesDeps): void {
  const app = typed(instance);
  const callbackUrl = (request: Parameters<typeof baseUrlOf>[1]) => `${baseUrlOf(deps, request)}/grants/login/callback`;

  app.get(
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
      const { authorizeUrl, pending } = deps.publicData.login.start(request.query.next, callbackUrl(request));
      writePendingLogin(deps, request, reply, pending);
      return reply.header('cache-control', 'no-store').redirect(authorizeUrl, 302);
    },
  );

  app.get(
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
      const identity = await deps.publicData.login.finish(request.query, pending, callbackUrl(request));
      const auth = deps.publicData.exportAuth;
      const profileId = await auth.profileForLogin(identity);
      // Created here rather than by an export GET: a GET never changes state.
      if (profileId !== null) await auth.ensureCredentials(profileId);
      writeSession(deps, request, reply, { handle: identity.handle, profileId, expiresAt: Date.now() + SESSION_TTL_MS });
      return reply.header('cache-control', 'no-store').redirect(pending!.next, 302);
    },
  );

  app.post(
    '/grants/logout',
    {
      schema: {
        tags: ['public data'],
        summary: 'Log out',
        description: 'Clears the session cookie and redirects (303) to `next`. Needs an Origin header of this service (a same-site form).',
        querystring: Next,
        response: { 303: Redirect, ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      requireSameOrigin(deps, request);
      clearSession(reply);
      return reply.header('cache-control', 'no-store').redirect(safeNext(request.query.next), 303);
    },
  );
  postOnly(app, '/grants/logout', 'Log out (POST only)');

  app.post(
    '/grants/export-credentials',
    {
      schema: {
        tags: ['public data'],
        summary: 'Rotate the logged-in user’s export credentials',
        description:
          'Replaces the `_key`/`_secret` pair of the logged-in user (the old pair stops working at once) and shows the new ' +
          'secret in this response only. Needs the session cookie and an Origin header of this service (a same-site form).',
        response: { 200: RotatedCredentials, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      requireSameOrigin(deps, request);
      const session = readSession(request);
      if (!session) throw new AppError('not_authenticated', 'Log in at /grants/login first.');
      if (session.profileId === null) {
        throw new AppError('not_team_member', `No profile belongs to ${session.handle}, so there are no export credentials to rotate.`);
      }
      reply.header('cache-control', 'no-store');
      return { api_key: await deps.publicData.exportAuth.rotateCredentials(session.profileId) };
    },
  );
  postOnly(app, '/grants/export-credentials', 'Rotate export credentials (POST only)');
}
