import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import { type CachedDocument, gzipEtag, type PublicCache } from '../cache.js';

/** What `sendDocument` reads: the cache, for what is left of a document's TTL and its gzip body. */
export interface DocumentSenderDeps {
  publicData: { cache: Pick<PublicCache, 'remainingSeconds' | 'gzipOf'> };
}

/** What `baseUrlOf` reads. */
export interface BaseUrlDeps {
  config: Pick<Config, 'publicBaseUrl'>;
}

const ENCODINGS = ['gzip', 'identity'];
/** `gzip;q=0` among the codings: the negotiator lets a `*` beside it win, where the explicit refusal must. */
const GZIP_REFUSED = /(?:^|,)\s*gzip\s*;\s*q\s*=\s*0(?:\.0{0,3})?\s*(?:,|$)/;

/** Whether `Accept-Encoding` prefers gzip to the JSON as it is (q-values, `*`, `gzip;q=0`; codings are case-insensitive). */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  const codings = header.toLowerCase();
  return negotiate(codings, ENCODINGS) === 'gzip' && !GZIP_REFUSED.test(codings);
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
  if (current === undefined) {
    reply.header('vary', field);
    return;
  }
  const fields = String(current);
  const wanted = field.toLowerCase();
  if (!fields.split(',').some((name) => name.trim().toLowerCase() === wanted)) reply.header('vary', `${fields}, ${field}`);
}

/**
 * Sends a JSON document with `ETag` and `Cache-Control`, or 304 when the client
 * has it. Anonymous documents are `public` for what is left of the server-side
 * TTL (so no copy outlives PUBLIC_CACHE_TTL), and gzip-compressed for clients
 * that accept it once the cache holds a gzip body (`Vary: Accept-Encoding`, and
 * the gzip body's own ETag). If-None-Match gets a 304 for the tag of a body
 * this request may get: the JSON's always, the gzip body's when it accepts
 * gzip. Documents for an authenticated caller are `private, no-store` and
 * never compressed.
 */
export function sendDocument(
  deps: DocumentSenderDeps,
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
  reply.header('cache-control', `public, max-age=${deps.publicData.cache.remainingSeconds(document)}`);
  addVary(reply, 'Accept-Encoding');
  const wantsGzip = acceptsGzip(request.headers['accept-encoding']);
  const gzipBody = wantsGzip ? deps.publicData.cache.gzipOf(document) : undefined;
  if (ifNoneMatch !== undefined) {
    // The JSON as it is is acceptable to every client; the gzip body only to one that accepts
    // gzip (a shared cache picks the stored answer to serve by the tag of the 304). The tag of
    // the body this request would get comes first (`*` or both tags held).
    const sendTag = gzipBody?.etag ?? document.etag;
    const gzipTag = gzipBody?.etag ?? gzipEtag(document.etag);
    const held = etagMatches(ifNoneMatch, sendTag)
      ? sendTag
      : wantsGzip && etagMatches(ifNoneMatch, gzipTag)
        ? gzipTag
        : etagMatches(ifNoneMatch, document.etag)
          ? document.etag
          : undefined;
    if (held !== undefined) return reply.header('etag', held).code(304).send();
  }
  reply.type('application/json; charset=utf-8');
  if (gzipBody === undefined) return reply.header('etag', document.etag).send(document.bytes);
  return reply.header('etag', gzipBody.etag).header('content-encoding', 'gzip').send(gzipBody.bytes);
}

/** The absolute origin of this server as clients see it: PUBLIC_BASE_URL, else the request's. */
export function baseUrlOf(deps: BaseUrlDeps, request: FastifyRequest): string {
  return deps.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}
