import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { errorResponses } from '../../http/errors.js';
import { Integer, LimitSchema, OffsetSchema } from '../../http/schemas.js';
import { MAX_ID } from '../values.js';
import { BOUNTY_ORDER_FIELDS, type BountyListQuery, MAX_ALTERNATIVES } from '../bounties.js';
import { BountySchema, QueryText } from './schemas.js';
import { baseUrlOf, sendDocument } from './http-cache.js';

const TextFilter = (what: string) =>
  QueryText(2000, `${what}: case-insensitive substring; a comma separates alternatives (any of them, at most ${MAX_ALTERNATIVES}).`);

const Query = Type.Object({
  experience_level: Type.Optional(TextFilter('Experience level')),
  project_length: Type.Optional(TextFilter('Project length')),
  bounty_type: Type.Optional(TextFilter('Bounty type')),
  bounty_owner_address: Type.Optional(TextFilter('Owner address')),
  github_url: Type.Optional(QueryText(20_000, 'Exact issue URL; a comma-separated list matches any of them.')),
  is_open: Type.Optional(QueryText(5, '`true` or `false`, any case.', { examples: ['true'] })),
  pk: Type.Optional(Integer({ minimum: 1, maximum: MAX_ID, description: 'Bounty id: an array of that one bounty, or empty.' })),
  order_by: Type.Optional(
    QueryText(
      40,
      `Sort field, a leading - for descending; default -web3_created (newest first). Ties go by pk in the same direction. Fields: ${Object.keys(BOUNTY_ORDER_FIELDS).join(', ')}.`,
      { examples: ['-value_in_eth'] },
    ),
  ),
  limit: Type.Optional(LimitSchema),
  offset: Type.Optional(OffsetSchema),
});

type QueryType = Partial<Omit<BountyListQuery, 'limit' | 'offset'>> & { limit?: number; offset?: number };

/** `GET /api/v0.1/bounties/`. */
export function bountiesRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: QueryType }>(
    '/api/v0.1/bounties/',
    {
      schema: {
        tags: ['public data'],
        summary: 'Bounties with their current status',
        description:
          'A JSON array of bounties. Filters combine with AND; unknown query parameters are ignored. ' +
          `May be up to PUBLIC_CACHE_TTL seconds stale; carries ETag and answers If-None-Match with 304.`,
        querystring: Query,
        response: { 200: Type.Array(BountySchema), ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const document = await ctx.publicData.bounties.list({ ...q, limit: q.limit ?? 100, offset: q.offset ?? 0 }, baseUrlOf(ctx, request));
      return sendDocument(ctx, request, reply, document);
    },
  );
}
