import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { Config } from '../../../config/index.js';
import type { PublicDataModule } from '../../publicdata.module.js';
import { AppError } from '../../../errors.js';
import { errorResponses } from '../../../http/errors.js';
import { Integer, LimitSchema } from '../../../http/schemas.js';
import { MAX_ID } from '../../values.js';
import { MAX_ALTERNATIVES, MAX_RAW_DATA_LENGTH, MAX_RAW_DATA_VALUES, MAX_SUBSTRING_ALTERNATIVES } from '../bounties.service.js';
import { RAW_DATA_SEARCHED } from '../bounties.repository.js';
import { BOUNTY_ORDER_FIELDS } from '../bounty-order.js';
import { BountySchema } from '../bounty.schema.js';
import { PublicOffsetSchema, QueryText } from '../../publicdata.schema.js';
import { baseUrlOf, sendDocument } from '../../routes/http-cache.js';
import { listHeaders, sendList } from '../../routes/list-headers.js';

const TextFilter = (what: string) =>
  QueryText(2000, `${what}: case-insensitive substring; a comma separates alternatives (any of them; at most ${MAX_SUBSTRING_ALTERNATIVES} across experience_level, project_length, bounty_type and bounty_owner_address).`);
const AnyOf = (maxLength: number, what: string) => QueryText(maxLength, `${what}; a comma separates alternatives (any of them, at most ${MAX_ALTERNATIVES}).`);

const Query = Type.Object({
  experience_level: Type.Optional(TextFilter('Experience level')),
  project_length: Type.Optional(TextFilter('Project length')),
  bounty_type: Type.Optional(TextFilter('Bounty type')),
  bounty_owner_address: Type.Optional(TextFilter('Owner address')),
  github_url: Type.Optional(QueryText(20_000, 'Exact issue URL; a comma-separated list matches any of them.')),
  is_open: Type.Optional(
    QueryText(5, '`true` or `false`, any case. True = not completed and not past `expires_date`; false = the others.', { examples: ['true'] }),
  ),
  pk: Type.Optional(Integer({ minimum: 1, maximum: MAX_ID, description: 'Bounty id: an array of that one bounty, or empty.' })),
  pk__gt: Type.Optional(Integer({ minimum: 0, maximum: MAX_ID, description: 'Only bounties whose id is strictly greater (deep paging: pass the last pk seen, with order_by=pk).' })),
  bounty_owner_github_username: Type.Optional(AnyOf(2000, "Owner's platform username, exact but any case")),
  idx_status: Type.Optional(AnyOf(500, 'Status (open, started, submitted, done, expired), any case')),
  network: Type.Optional(AnyOf(2000, 'Network, exact (e.g. mainnet)')),
  standard_bounties_id: Type.Optional(AnyOf(2000, 'Id of the bounty on the standard bounties contract, a whole number')),
  started: Type.Optional(AnyOf(2000, 'Platform username among the interested workers, any case (same as interested_github_username)')),
  interested_github_username: Type.Optional(AnyOf(2000, 'Platform username among the interested workers, any case')),
  fulfiller_github_username: Type.Optional(AnyOf(2000, 'Platform username among the fulfillers, any case')),
  raw_data: Type.Optional(
    QueryText(
      2000,
      `Case-insensitive substring of the first ${RAW_DATA_SEARCHED} characters of the imported raw record; comma-separated substrings must all match (at most ${MAX_RAW_DATA_VALUES}, each at most ${MAX_RAW_DATA_LENGTH} characters).`,
    ),
  ),
  order_by: Type.Optional(
    QueryText(
      40,
      `Sort field, a leading - for descending; default -web3_created (newest first). Ties go by pk in the same direction; bounties without a value come last in both directions. Fields: ${Object.keys(BOUNTY_ORDER_FIELDS).join(', ')}.`,
      { examples: ['-value_in_eth'] },
    ),
  ),
  limit: Type.Optional(LimitSchema),
  offset: Type.Optional(PublicOffsetSchema),
});


/** What the bounty routes read. */
export interface BountiesRouteDeps {
  publicData: Pick<PublicDataModule, 'bounties' | 'cache'>;
  config: Pick<Config, 'publicBaseUrl'>;
}

/** `GET /api/v0.1/bounties/` and `GET /api/v0.1/bounties/{pk}`. */
export function bountiesRoute(instance: FastifyInstance, deps: BountiesRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/api/v0.1/bounties/',
    {
      schema: {
        tags: ['public data'],
        summary: 'Bounties with their current status',
        description:
          'A JSON array of bounties (at most `limit`, 100 by default). Filters combine with AND; unknown query parameters are ignored. ' +
          '`X-Total-Count` gives the number of matches and `Link: <…>; rel="next"` the next page. ' +
          `May be up to PUBLIC_CACHE_TTL seconds stale; carries ETag and answers If-None-Match with 304.`,
        querystring: Query,
        response: { 200: { ...Type.Array(BountySchema), headers: listHeaders('Bounties') }, ...errorResponses(400, 429) },
      },
    },
    // Not async, and no closure per request: a cached page is sent at once, without a promise.
    (request, reply) => {
      const q = request.query;
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      const baseUrl = baseUrlOf(deps, request);
      const document = deps.publicData.bounties.list({ ...q, limit, offset }, baseUrl, request.url);
      if (!(document instanceof Promise)) return sendList(deps, request, reply, document, baseUrl, limit, offset);
      return document.then((built) => sendList(deps, request, reply, built, baseUrl, limit, offset));
    },
  );

  const detail = async (request: FastifyRequest<{ Params: { pk: number } }>, reply: FastifyReply) => {
    const document = await deps.publicData.bounties.get(request.params.pk, baseUrlOf(deps, request));
    if (!document) throw new AppError('not_found', `No bounty with pk ${request.params.pk}.`);
    return sendDocument(deps, request, reply, document);
  };
  const detailSchema = (withSlash: boolean) => ({
    tags: ['public data'],
    summary: withSlash ? 'One bounty (same as without the trailing slash)' : 'One bounty',
    description: 'The bounty object with that pk (not an array); query parameters are ignored. 404 if there is none.',
    params: Type.Object({ pk: Integer({ minimum: 1, maximum: MAX_ID, description: 'Bounty id.' }) }),
    response: { 200: BountySchema, ...errorResponses(400, 404, 429) },
  });
  app.get('/api/v0.1/bounties/:pk', { schema: detailSchema(false) }, detail);
  app.get('/api/v0.1/bounties/:pk/', { schema: detailSchema(true) }, detail);
}
