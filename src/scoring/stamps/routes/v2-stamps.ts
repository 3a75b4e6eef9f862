import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorResponses } from '../../../http/errors.js';
import { AddressSchema, LimitSchema } from '../../../http/schemas.js';
import { typed } from '../../../http/typebox.js';
import { requirePermission } from '../../accounts/api-key-auth.js';
import { catalogueIcons } from '../icons.js';
import { decodePageToken, encodePageToken } from '../stamp-pages.service.js';
import { baseUrl, MetadataEntries, StampPage, type StampRouteDeps } from './stamps.js';

const V2StampsQuery = Type.Object({
  include_metadata: Type.Optional(Type.Boolean({ default: false, description: 'Add each stamp’s catalogue entry.' })),
  limit: Type.Optional(LimitSchema),
  token: Type.Optional(Type.String({ maxLength: 64, description: 'Opaque page token from `next`/`prev`.' })),
});

/** `GET /v2/stamps/{address}` and `GET /v2/stamps/metadata`: the v1 stamp pages and catalogue under v2 paths. */
export function v2StampsRoutes(instance: FastifyInstance, deps: StampRouteDeps): void {
  const app = typed(instance);
  const icons = catalogueIcons(deps.catalogue, deps.config);
  const iconsFor = (request: FastifyRequest) => icons.forOrigin(`${request.protocol}://${request.host}`);

  // A static path: the router prefers it over `/v2/stamps/:address` (which "metadata" would not match anyway).
  app.get(
    '/v2/stamps/metadata',
    {
      schema: {
        tags: ['v2'],
        summary: 'The stamp catalogue (as /registry/stamp-metadata)',
        description: 'Example: `curl -H "X-API-KEY: $KEY" $BASE/v2/stamps/metadata`',
        security: [{ apiKey: [] }],
        response: { 200: MetadataEntries, ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      requirePermission(request, 'read_scores');
      return iconsFor(request).platforms as Static<typeof MetadataEntries>;
    },
  );

  app.get(
    '/v2/stamps/:address',
    {
      schema: {
        tags: ['v2'],
        summary: 'The stored stamps of an address, newest first',
        description:
          'Paged as in v1 (`limit` ≤ 1000; follow `next`/`prev`, which keep `limit` and `include_metadata`). Deleted and revoked ' +
          'stamps are not listed.\n\nExample: `curl -H "X-API-KEY: $KEY" "$BASE/v2/stamps/0x5cdef6d4b2f8e6e1f3b0b0a5e3d2c1b0a9f8e7d6?limit=10"`',
        security: [{ apiKey: [] }],
        params: Type.Object({ address: AddressSchema }),
        querystring: V2StampsQuery,
        response: { 200: StampPage, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => {
      requirePermission(request, 'read_scores');
      const address = request.params.address.toLowerCase();
      const limit = request.query.limit ?? 100;
      const includeMetadata = request.query.include_metadata ?? false;
      const offset = request.query.token !== undefined ? decodePageToken(request.query.token) : 0;
      const page = await deps.stampPages.page(address, { limit, offset, includeMetadata, metadataFor: iconsFor(request).metadataFor });
      const link = (at: number | null) => {
        if (at === null) return null;
        const query = new URLSearchParams({ limit: String(limit), token: encodePageToken(at) });
        if (includeMetadata) query.set('include_metadata', 'true');
        return `${baseUrl(deps, request)}/v2/stamps/${address}?${query}`;
      };
      return { next: link(page.nextOffset), prev: link(page.prevOffset), items: page.items };
    },
  );
}
