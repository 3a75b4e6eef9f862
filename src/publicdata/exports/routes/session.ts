import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodePendingLogin, decodeSession, encodeCookie, LOGIN_TTL_MS, type PendingLogin, type Session, SESSION_TTL_MS } from '../oauth.js';
import { type BaseUrlDeps, baseUrlOf } from '../../routes/http-cache.js';

/** The signed login session of a grant team member (path /grants). */
export const SESSION_COOKIE = 'stampgate_session';
/** The signed `state`/PKCE verifier/next of a login in progress (path /grants/login). */
export const LOGIN_COOKIE = 'stampgate_login';

function unsigned(request: FastifyRequest, name: string): string | null {
  const raw = request.cookies[name];
  if (!raw) return null;
  const result = request.unsignCookie(raw);
  return result.valid ? result.value : null;
}

function cookieOptions(deps: BaseUrlDeps, request: FastifyRequest, path: string, maxAgeMs: number) {
  return {
    path,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: baseUrlOf(deps, request).startsWith('https:'),
    signed: true,
    maxAge: Math.floor(maxAgeMs / 1000),
  };
}

export function readSession(request: FastifyRequest, now: number = Date.now()): Session | null {
  const value = unsigned(request, SESSION_COOKIE);
  return value === null ? null : decodeSession(value, now);
}

export function writeSession(deps: BaseUrlDeps, request: FastifyRequest, reply: FastifyReply, session: Session): void {
  reply.setCookie(SESSION_COOKIE, encodeCookie(session), cookieOptions(deps, request, '/grants', SESSION_TTL_MS));
}

export function clearSession(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/grants' });
}

export function readPendingLogin(request: FastifyRequest, now: number = Date.now()): PendingLogin | null {
  const value = unsigned(request, LOGIN_COOKIE);
  return value === null ? null : decodePendingLogin(value, now);
}

export function writePendingLogin(deps: BaseUrlDeps, request: FastifyRequest, reply: FastifyReply, pending: PendingLogin): void {
  reply.setCookie(LOGIN_COOKIE, encodeCookie(pending), cookieOptions(deps, request, '/grants/login', LOGIN_TTL_MS));
}

export function clearPendingLogin(reply: FastifyReply): void {
  reply.clearCookie(LOGIN_COOKIE, { path: '/grants/login' });
}
