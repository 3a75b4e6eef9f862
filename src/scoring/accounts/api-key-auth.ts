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

/** Whether the request presents a key at all (then nothing else, such as a cookie, may authenticate it). */
export function presentsApiKey(request: FastifyRequest): boolean {
  return request.headers['x-api-key'] !== undefined || request.headers.authorization !== undefined;
}

export type OnRequestCallback = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * An `onRequest` hook that resolves the caller from `X-API-KEY` (or a bearer token). A key held in
 * the key cache is checked without a promise; only a miss waits for the database.
 *
 * `withoutKey` (the portal's session cookie) may authenticate a request that presents no key;
 * it runs inside this hook rather than as a hook of its own, which every keyed request would pass.
 */
export function apiKeyAuthentication(apiKeys: ApiKeyService, withoutKey?: OnRequestCallback): OnRequestCallback {
  const byKey = (request: FastifyRequest, done: HookHandlerDoneFunction): void => {
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
  if (!withoutKey) return (request, _reply, done) => byKey(request, done);
  return (request, reply, done) => {
    if (presentsApiKey(request)) return byKey(request, done);
    withoutKey(request, reply, (error?: Error) => {
      if (error) return done(error);
      if (request.caller) return done();
      byKey(request, done);
    });
  };
}

/** The authenticated caller, refused with 403 when its key lacks the permission. */
export function requirePermission(request: FastifyRequest, permission: Permission): Caller {
  const caller = request.caller;
  if (!caller) throw new AppError('missing_api_key', 'Send your API key in the X-API-KEY header.');
  if (!caller.permissions.includes(permission)) throw new AppError('permission_denied', `This API key does not have the ${permission} permission.`);
  return caller;
}
