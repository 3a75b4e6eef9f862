import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { PublicDataModule } from '../../publicdata.module.js';
import { MAX_ISSUE_URL_LENGTH } from '../../../chain/legacy-bounty.js';
import { errorResponses } from '../../../http/errors.js';
import { sendDocument } from '../../routes/http-cache.js';

const LegacyBountyRecordSchema = Type.Object(
  {
    amount: Type.Number({ description: 'Amount in whole units of the denomination (wei / 10^18 for ETH, / 10^decimals for a token).' }),
    amount_denomination: Type.String({ description: 'Token name from the bounty metadata, or ETH.' }),
    action_url: Type.String({ description: 'The issue URL, as the index stores it (ending with /).' }),
    title: Type.String(),
    description: Type.String(),
    created_on: Type.String({ description: 'date_time: ISO 8601 with fractional seconds and Z.' }),
    source_project: Type.String({ description: 'org/repo of the issue URL.' }),
    tags: Type.Array(Type.String(), { description: 'The bounty keywords.' }),
  },
  { title: 'LegacyBountyRecord' },
);

/** What the legacy bounty route reads. */
export interface LegacyBountyRouteDeps {
  publicData: Pick<PublicDataModule, 'legacyBounties' | 'cache'>;
}

/** `GET /api/v0.1/legacy/bounty?url=…`: a bounty from the legacy on-chain index. */
export function legacyBountyRoute(instance: FastifyInstance, deps: LegacyBountyRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/api/v0.1/legacy/bounty',
    {
      schema: {
        tags: ['public data'],
        summary: 'A bounty from the legacy on-chain bounty index (deprecated path)',
        description:
          'Calls `bountydetails(url)` on the configured index contract (`eth_call`) and maps the result to the legacy ' +
          'contract record. 404 when no bounty is posted for the URL or when the legacy read is not configured; ' +
          '502 when the Ethereum RPC endpoint cannot be read. A found record may be up to PUBLIC_CACHE_TTL seconds stale; carries ETag and answers If-None-Match with 304.',
        querystring: Type.Object({
          url: Type.String({
            description: `Issue URL of the bounty: an absolute http(s) URL of at most ${MAX_ISSUE_URL_LENGTH} characters; a trailing / is added when missing.`,
            examples: ['https://github.com/gitcoinco/web/issues/1/'],
          }),
        }),
        response: { 200: LegacyBountyRecordSchema, ...errorResponses(400, 404, 502) },
      },
    },
    async (request, reply) => sendDocument(deps, request, reply, await deps.publicData.legacyBounties.document(request.query.url)),
  );
}
