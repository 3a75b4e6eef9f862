import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app-context.js';
import type { CachedDocument } from '../cache.js';

/** Whether an `If-None-Match` header names this ETag (weak comparison, `*` matches). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const wanted = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === wanted;
  });
}

/**
 * Sends a JSON document with `ETag` and `Cache-Control`, or 304 when the client
 * has it. Anonymous documents are `public` for what is left of the server-side
 * TTL (so no copy outlives PUBLIC_CACHE_TTL); documents for an authenticated
 * caller are `private, no-store`.
 */
export function sendDocument(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  document: CachedDocument,
  audience: 'public' | 'private' = 'public',
): FastifyReply {
  reply.header('etag', document.etag);
  reply.header(
    'cache-control',
    audience === 'private' ? 'private, no-store' : `public, max-age=${ctx.publicData.cache.remainingSeconds(document)}`,
  );
  if (audience === 'private') reply.header('vary', 'Cookie');
  if (etagMatches(request.headers['if-none-match'], document.etag)) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(document.bytes);
}

/** The absolute origin of this server as clients see it: PUBLIC_BASE_URL, else the request's. */
export function baseUrlOf(ctx: AppContext, request: FastifyRequest): string {
  return ctx.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}
