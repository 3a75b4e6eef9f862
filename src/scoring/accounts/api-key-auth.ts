import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from '../../errors.js';
import type { ApiKeyService, Caller } from './api-keys.service.js';
import type { Permission } from './permissions.js';

export type { Permission } from './permissions.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string') return header.trim();
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && /^bearer\s+/i.test(authorization)) {
    return authorization.replace(/^bearer\s+/i, '').trim();
  }
  return undefined;
}

/**
 * An `onRequest` hook that resolves the caller from `X-API-KEY` (or a bearer token). A key held in
 * the key cache is checked without a promise; only a miss waits for the database.
 */
export function apiKeyAuthentication(apiKeys: ApiKeyService) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    // Already authenticated by a developer portal session cookie (src/portal/session-auth.ts).
    if (request.caller) return done();
    const presented = presentedKey(request);
    let cached: Caller | undefined;
    try {
      cached = apiKeys.cachedCaller(presented);
    } catch (error) {
      return done(error as Error);
    }
    if (cached) {
      request.caller = cached;
      return done();
    }
    apiKeys.authenticate(presented).then((caller) => {
      request.caller = caller;
      done();
    }, done);
  };
}

/** The authenticated caller, refused with 403 when its key lacks the permission. */
export function requirePermission(request: FastifyRequest, permission: Permission): Caller {
  const caller = request.caller;
  if (!caller) throw new AppError('missing_api_key', 'Send your API key in the X-API-KEY header.');
  if (!caller.permissions.includes(permission)) throw new AppError('permission_denied', `This API key does not have the ${permission} permission.`);
  return caller;
}
