import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Config } from '../config/index.js';
import { AppError } from '../errors.js';
import type { ResponseObserver } from '../http/response-observers.js';
import { presentsApiKey } from '../scoring/accounts/api-key-auth.js';
import type { Caller, Tier } from '../scoring/accounts/api-keys.service.js';
import { permissionNames } from '../scoring/accounts/permissions.js';
import { isCsrfTokenOf, type PortalSession, type PortalSessionService } from './portal-sessions.service.js';
import type { UsageCounter } from './usage-counter.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The portal session of the request's cookie, when it authenticated the request. */
    portalSession?: PortalSession;
    /** Its cookie token (sign-out needs it). */
    portalToken?: string;
  }
  interface FastifyContextConfig {
    /**
     * The route changes state although its method is GET (it records a score, issues a nonce):
     * a portal cookie authenticates it only with the session's CSRF token, like a POST.
     */
    changesState?: boolean;
  }
}

export const PORTAL_COOKIE = 'stampgate_portal';
export const CSRF_HEADER = 'x-csrf-token';
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The value of one cookie of a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The settings that say where the portal is served. */
export type PortalSite = Pick<Config, 'env' | 'publicBaseUrl'>;

/** This service's origin as browsers see it: PUBLIC_BASE_URL's, else the request's scheme and Host. */
export function ownOrigin(config: PortalSite, request: FastifyRequest): string {
  try {
    return new URL(config.publicBaseUrl ?? `${request.protocol}://${request.host}`).origin;
  } catch {
    throw new AppError('invalid_request', 'The request\'s Host header does not name a valid host.');
  }
}

/** `Set-Cookie` of the session: httpOnly, SameSite=Lax, Secure over https and always in production. */
export function sessionCookie(config: PortalSite, request: FastifyRequest, token: string, maxAgeSeconds: number): string {
  const secure = config.env === 'production' || ownOrigin(config, request).startsWith('https:');
  return `${PORTAL_COOKIE}=${token}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/**
 * What the API routes see of a portal session: the account owner, every permission, the account's
 * tier (never more) and so the account's budget, which the session spends with every key of the
 * account. Its key id is minus the account id: never a real key's; usage counting skips it.
 */
function sessionCaller(session: PortalSession, budget: { tier: Tier; name: string }): Caller {
  return {
    keyId: -session.accountId,
    accountId: session.accountId,
    prefix: `portal-${session.accountId}`,
    tier: budget.tier,
    accountTier: budget.tier,
    accountBudget: budget.name,
    permissions: permissionNames,
  };
}

/** An account's budget: its tier and counter (`ApiKeyService#accountBudget`). */
export type AccountBudgetOf = (accountId: number) => Promise<{ tier: Tier; name: string }>;

/**
 * A portal session cookie authenticates a request to the HTTP API like an API key of its
 * account (an `X-API-KEY` or `Authorization` header always wins). CSRF defence on top of the
 * SameSite=Lax cookie: a state change (anything but GET/HEAD/OPTIONS) is authenticated by the
 * cookie only when it carries the session's CSRF token in `X-CSRF-Token` and the browser's
 * `Origin` is this service's own; without the header the cookie is ignored (the request is
 * anonymous), with a wrong one it is refused (403 `csrf_rejected`). A GET route that changes
 * state (`config.changesState`) needs the token too: without it the cookie is refused (403), and
 * a foreign `Origin`, when sent, is refused as for a POST.
 *
 * An `onRequest` callback hook for the scopes whose routes accept a session (the account's
 * session routes alone; the API-key routes through `apiKeyAuthentication`, in the same hook as
 * the key): requests without a session cookie pass without a promise or a query.
 */
export function portalSessionAuthentication(config: PortalSite, sessions: PortalSessionService, accountBudget: AccountBudgetOf) {
  const resolve = async (request: FastifyRequest, token: string, unsafe: boolean, presented: string | string[] | undefined) => {
    const session = await sessions.resolve(token);
    if (!session) return;
    if (unsafe) {
      const expected = ownOrigin(config, request);
      // Browsers send no Origin on a same-origin GET; a GET that writes is guarded by the token (and a foreign Origin).
      const originOptional = safeMethods.has(request.method) && request.headers.origin === undefined;
      if (!originOptional && request.headers.origin !== expected) {
        throw new AppError('csrf_rejected', `A portal request that changes something must come from ${expected} (its Origin header is ${request.headers.origin === undefined ? 'missing' : 'another site'}).`);
      }
      if (presented === undefined) {
        throw new AppError('csrf_rejected', 'This request changes something: a portal session must send its X-CSRF-Token header (reload the portal).');
      }
      if (typeof presented !== 'string' || !isCsrfTokenOf(token, presented)) {
        throw new AppError('csrf_rejected', 'The X-CSRF-Token header is not this session\'s; reload the portal.');
      }
    }
    request.portalSession = session;
    request.portalToken = token;
    request.caller = sessionCaller(session, await accountBudget(session.accountId));
  };
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (presentsApiKey(request)) return done();
    const token = readCookie(request.headers.cookie, PORTAL_COOKIE);
    if (token === undefined) return done();
    const writingGet = request.routeOptions.config?.changesState === true;
    const unsafe = writingGet || !safeMethods.has(request.method);
    const presented = request.headers[CSRF_HEADER];
    // A GET that writes, with a live session's cookie alone: refused rather than made anonymous
    // (resolve), so that a cross-site page changes nothing; a cookie of no session is no session.
    if (unsafe && !writingGet && presented === undefined) return done();
    resolve(request, token, unsafe, presented).then(() => done(), done);
  };
}

/** Counts every request an API key made (including its 429s) once it is answered (for `observeResponses`). */
export function keyUsageObserver(usage: UsageCounter): ResponseObserver {
  return (request, reply) => {
    const caller = request.caller;
    if (caller && caller.keyId > 0) usage.record(caller.keyId, reply.statusCode === 429);
  };
}
