import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { type CachedDocument, gzipEtag } from '../cache.js';

const ENCODINGS = ['gzip', 'identity'];

/** Whether `Accept-Encoding` prefers gzip to the JSON as it is (q-values, `*` and `gzip;q=0` honoured; codings are case-insensitive). */
function acceptsGzip(header: string | undefined): boolean {
  return header !== undefined && negotiate(header.toLowerCase(), ENCODINGS) === 'gzip';
}

/** Whether an `If-None-Match` header names this ETag (weak comparison, `*` matches). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const wanted = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === wanted;
  });
}

/** Adds a field to `Vary`, keeping what is there (CORS's `Origin`). */
function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  reply.header('vary', current === undefined ? field : `${String(current)}, ${field}`);
}

/**
 * Sends a JSON document with `ETag` and `Cache-Control`, or 304 when the client
 * has it. Anonymous documents are `public` for what is left of the server-side
 * TTL (so no copy outlives PUBLIC_CACHE_TTL), and gzip-compressed for clients
 * that accept it once the cache holds a gzip body (`Vary: Accept-Encoding`, and
 * the gzip body's own ETag; either tag gets a 304). Documents for an
 * authenticated caller are `private, no-store` and never compressed.
 */
export function sendDocument(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  document: CachedDocument,
  audience: 'public' | 'private' = 'public',
): FastifyReply {
  const ifNoneMatch = request.headers['if-none-match'];
  if (audience === 'private') {
    reply.header('etag', document.etag).header('cache-control', 'private, no-store');
    addVary(reply, 'Cookie');
    if (etagMatches(ifNoneMatch, document.etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(document.bytes);
  }
  reply.header('cache-control', `public, max-age=${ctx.publicData.cache.remainingSeconds(document)}`);
  addVary(reply, 'Accept-Encoding');
  const gzipBody = acceptsGzip(request.headers['accept-encoding']) ? ctx.publicData.cache.gzipOf(document) : undefined;
  if (ifNoneMatch !== undefined) {
    // A client holding either body holds this document: the 304 names the tag it sent.
    const held = etagMatches(ifNoneMatch, document.etag) ? document.etag : etagMatches(ifNoneMatch, gzipEtag(document.etag)) ? gzipEtag(document.etag) : undefined;
    if (held !== undefined) return reply.header('etag', held).code(304).send();
  }
  reply.type('application/json; charset=utf-8');
  if (gzipBody === undefined) return reply.header('etag', document.etag).send(document.bytes);
  return reply.header('etag', gzipBody.etag).header('content-encoding', 'gzip').send(gzipBody.bytes);
}

/** The absolute origin of this server as clients see it: PUBLIC_BASE_URL, else the request's. */
export function baseUrlOf(ctx: AppContext, request: FastifyRequest): string {
  return ctx.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}
