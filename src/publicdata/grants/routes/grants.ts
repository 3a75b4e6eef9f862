import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../../config/index.js';
import { typed } from '../../../http/typebox.js';
import type { PublicDataModule } from '../../publicdata.module.js';
import { errorResponses } from '../../../http/errors.js';
import { Integer, LimitSchema } from '../../../http/schemas.js';
import { MAX_ID } from '../../values.js';
import { GrantSchema } from '../grant.schema.js';
import { PublicOffsetSchema, QueryText } from '../../publicdata.schema.js';
import { baseUrlOf } from '../../routes/http-cache.js';
import { listHeaders, sendList } from '../../routes/list-headers.js';

const Query = Type.Object({
  title: Type.Optional(QueryText(500, 'Exact title, any case.')),
  description: Type.Optional(QueryText(20_000, 'Exact description, any case.')),
  admin_address: Type.Optional(Type.String({ description: 'Exact admin address: 0x and 40 hexadecimal digits, any case (else 400 invalid_address).' })),
  keyword: Type.Optional(QueryText(200, 'Case-insensitive substring of the title, description or reference URL.')),
  grant_type: Type.Optional(QueryText(100, 'Exact grant type.')),
  pk: Type.Optional(Integer({ minimum: 1, maximum: MAX_ID, description: 'Grant id: an array of that one grant, or empty.' })),
  limit: Type.Optional(LimitSchema),
  offset: Type.Optional(PublicOffsetSchema),
});


/** What the grant list route reads. */
export interface GrantsRouteDeps {
  publicData: Pick<PublicDataModule, 'grants' | 'cache'>;
  config: Pick<Config, 'publicBaseUrl'>;
}

/** `GET /api/v0.1/grants/`. */
export function grantsRoute(instance: FastifyInstance, deps: GrantsRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/api/v0.1/grants/',
    {
      schema: {
        tags: ['public data'],
        summary: 'Active grants with admin and team profiles',
        description:
          'A JSON array of active grants by id (at most `limit`, 100 by default). Filters combine with AND; unknown query parameters are ignored. ' +
          '`X-Total-Count` gives the number of matches and `Link: <…>; rel="next"` the next page. ' +
          'May be up to PUBLIC_CACHE_TTL seconds stale; carries ETag and answers If-None-Match with 304.',
        querystring: Query,
        response: { 200: { ...Type.Array(GrantSchema), headers: listHeaders('Grants') }, ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      const document = await deps.publicData.grants.list({ ...q, limit, offset });
      sendList(deps, request, reply, document, baseUrlOf(deps, request), limit, offset);
      return reply;
    },
  );
}
