import type { FastifyInstance } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { SubmissionService } from '../submission.service.js';
import { requirePermission } from '../../accounts/api-key-auth.js';
import { errorResponses } from '../../../http/errors.js';
import { SubmitPassportSchema } from '../submission.schema.js';
import { ScoreRecordSchema } from '../score-record.schema.js';


/** What these routes use. */
export interface SubmitPassportRouteDeps {
  submissions: Pick<SubmissionService, 'submit'>;
}

export function submitPassportRoute(instance: FastifyInstance, deps: SubmitPassportRouteDeps): void {
  const app = typed(instance);
  app.post(
    '/registry/submit-passport',
    {
      schema: {
        tags: ['scoring'],
        summary: 'Submit an address for scoring',
        description:
          'Records the submission durably, waits up to SUBMIT_WAIT_MS for the score and answers DONE with it, ' +
          'or PROCESSING (poll the score endpoint). Do not retry on timeout: scoring continues. ' +
          'A `signature` may be an EOA\'s or, when SMART_WALLET_RPC_URL is set, a contract wallet\'s (ERC-1271, or ERC-6492 for a ' +
          'wallet not deployed yet); 502 `upstream_unavailable` when that endpoint fails or is too slow: the nonce stays usable, send the same request again.',
        security: [{ apiKey: [] }],
        body: SubmitPassportSchema,
        response: { 200: ScoreRecordSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 502) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'submit_passports');
      return deps.submissions.submit(caller.accountId, request.body);
    },
  );
}
