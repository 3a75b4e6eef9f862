import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { Catalogue } from '../catalogue.js';
import type { Config } from '../../../config/index.js';
import type { StampPageService } from '../stamp-pages.service.js';
import { requirePermission } from '../../accounts/api-key-auth.js';
import { errorResponses } from '../../../http/errors.js';
import { AddressSchema, LimitSchema, OffsetSchema } from '../../../http/schemas.js';
import { catalogueIcons } from '../icons.js';
import { decodePageToken, encodePageToken } from '../stamp-pages.service.js';

const IconUrl = Type.String({ description: 'Absolute URL of the platform icon.' });

const PlatformSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  icon: IconUrl,
  description: Type.String(),
  connectMessage: Type.String(),
});

const ProviderMetadata = Type.Union(
  [
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      hash: Type.String(),
      group: Type.String(),
      platform: PlatformSummary,
    }),
    Type.Null(),
  ],
  { description: 'Catalogue entry of the stamp’s provider (null when the catalogue does not know it). Beta.' },
);

const StampItem = Type.Object(
  {
    version: Type.String(),
    credential: Type.Object({}, { additionalProperties: true, description: 'The stored verifiable credential, unchanged.' }),
    metadata: Type.Optional(ProviderMetadata),
  },
  { title: 'StampItem' },
);

export const StampPage = Type.Object(
  {
    next: Type.Union([Type.String(), Type.Null()], { description: 'URL of the next page, or null.' }),
    prev: Type.Union([Type.String(), Type.Null()], { description: 'URL of the previous page, or null.' }),
    items: Type.Array(StampItem),
  },
  { title: 'StampPage' },
);

export const StampsQuery = Type.Object({
  include_metadata: Type.Optional(Type.Boolean({ default: false, description: 'Add each stamp’s catalogue entry (beta).' })),
  limit: Type.Optional(LimitSchema),
  offset: Type.Optional(OffsetSchema),
  token: Type.Optional(Type.String({ maxLength: 64, description: 'Opaque page token from `next`/`prev`; wins over `offset`.' })),
});

const MetadataStamp = Type.Object({ name: Type.String(), description: Type.String(), hash: Type.String() });
const MetadataEntry = Type.Object(
  {
    id: Type.String(),
    icon: IconUrl,
    name: Type.String(),
    description: Type.String(),
    connectMessage: Type.String(),
    groups: Type.Array(Type.Object({ name: Type.String(), stamps: Type.Array(MetadataStamp) })),
  },
  { title: 'StampMetadataEntry' },
);

export const MetadataEntries = Type.Array(MetadataEntry);

/** What the stamp routes use: the catalogue, the stamp pages and where icons and links point. */
export interface StampRouteDeps {
  catalogue: Catalogue;
  stampPages: Pick<StampPageService, 'page'>;
  config: Pick<Config, 'publicBaseUrl' | 'iconBaseUrl'>;
}

export function baseUrl(deps: Pick<StampRouteDeps, 'config'>, request: FastifyRequest): string {
  return deps.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}

export function stampsRoutes(instance: FastifyInstance, deps: StampRouteDeps): void {
  const app = typed(instance);
  const icons = catalogueIcons(deps.catalogue, deps.config);
  const iconsFor = (request: FastifyRequest) => icons.forOrigin(`${request.protocol}://${request.host}`);
  app.get(
    '/registry/stamps/:address',
    {
      schema: {
        tags: ['scoring'],
        summary: 'The stored stamps of an address, newest first',
        description:
          'Pages keep `limit` and `include_metadata`; `offset=5&limit=5` returns elements 6-10. Deleted and revoked stamps are not listed.',
        security: [{ apiKey: [] }],
        params: Type.Object({ address: AddressSchema }),
        querystring: StampsQuery,
        response: { 200: StampPage, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => {
      requirePermission(request, 'read_scores');
      const address = request.params.address.toLowerCase();
      const limit = request.query.limit ?? 100;
      const includeMetadata = request.query.include_metadata ?? false;
      const offset = request.query.token !== undefined ? decodePageToken(request.query.token) : (request.query.offset ?? 0);
      const page = await deps.stampPages.page(address, { limit, offset, includeMetadata, metadataFor: iconsFor(request).metadataFor });
      const link = (at: number | null) => {
        if (at === null) return null;
        const query = new URLSearchParams({ limit: String(limit), token: encodePageToken(at) });
        if (includeMetadata) query.set('include_metadata', 'true');
        return `${baseUrl(deps, request)}/registry/stamps/${address}?${query}`;
      };
      return { next: link(page.nextOffset), prev: link(page.prevOffset), items: page.items };
    },
  );


  app.get(
    '/registry/stamp-metadata',
    {
      schema: {
        tags: ['scoring'],
        summary: 'The stamp catalogue: every platform, its groups and stamps (beta)',
        description:
          '`hash` is keccak256 of the provider name. Every `icon` is an absolute URL: ICON_BASE_URL/<file> when set, ' +
          'else this server’s /static/icons/<file>. Served from memory.',
        security: [{ apiKey: [] }],
        response: { 200: MetadataEntries, ...errorResponses(401, 429) },
      },
    },
    // Frozen once at start-up and served as is; the reply only reads it.
    async (request) => iconsFor(request).platforms as Static<typeof MetadataEntries>,
  );
}
