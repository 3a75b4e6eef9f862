import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CachedDocument } from '../cache.js';
import { COUNT_AHEAD, MAX_OFFSET } from '../values.js';
import { type DocumentSenderDeps, sendDocument } from './http-cache.js';

/**
 * The paging headers of every list of the public data API (bounties, grants): `X-Total-Count`
 * and, while more rows follow, `Link: <absolute URL>; rel="next"`. One helper, so that the lists
 * cannot drift apart in format or in when the link is left out.
 */

/** The list's response headers, as the OpenAPI document shows them (name → schema); `items` names what is listed. */
export function listHeaders(items: string) {
  return {
    'x-total-count': Type.Integer({
      description: `${items} matching the filters, before limit and offset: exact up to ${COUNT_AHEAD} past the end of the page, else offset + limit + ${COUNT_AHEAD}.`,
    }),
    link: Type.String({
      description: `\`<absolute URL>; rel="next"\` when more ${items.toLowerCase()} follow (same query, next offset, at most ${MAX_OFFSET}); absent on the last page.`,
    }),
  };
}

/** The page with `X-Total-Count` (the document's total), and `Link: rel="next"` (this request's query with the next offset) when more rows follow. */
export function sendList(
  deps: DocumentSenderDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  document: CachedDocument,
  baseUrl: string,
  limit: number,
  offset: number,
): void {
  const total = document.total ?? 0;
  reply.header('x-total-count', String(total));
  // No link past the deepest offset a list accepts: from there a client pages through filters (pk__gt).
  if (limit > 0 && offset + limit < total && offset + limit <= MAX_OFFSET) reply.header('link', nextLink(baseUrl, request.url, limit, offset));
  sendDocument(deps, request, reply, document);
}

/** Links already written, by base URL and request URL (a repeated request skips the URL parsing, 12 µs of a 170 µs cache hit). */
const links = new Map<string, string>();
const LINKS_KEPT = 1000;
const MAX_REMEMBERED_URL_LENGTH = 1024;

function nextLink(baseUrl: string, requestUrl: string, limit: number, offset: number): string {
  const key = requestUrl.length > MAX_REMEMBERED_URL_LENGTH ? undefined : `${baseUrl}|${requestUrl}`;
  const known = key === undefined ? undefined : links.get(key);
  if (known !== undefined) return known;
  const url = new URL(requestUrl, 'http://placeholder');
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('offset', String(offset + limit));
  const link = `<${baseUrl}${url.pathname}${url.search}>; rel="next"`;
  if (key !== undefined) {
    if (links.size >= LINKS_KEPT) links.clear();
    links.set(key, link);
  }
  return link;
}
