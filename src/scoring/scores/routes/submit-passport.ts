import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { AppContext } from '../../../app-context.js';
import { recoverPersonalSignAddress } from '../../../chain/signatures.js';
import { AppError } from '../../../errors.js';
import { requirePermission } from '../../accounts/api-key-auth.js';
import { errorResponses } from '../../../http/errors.js';
import { AddressSchema, ScorerIdSchema } from '../../../http/schemas.js';
import { ScoreRecordSchema } from '../score-record.schema.js';

const SubmitBody = Type.Object(
  {
    address: AddressSchema,
    scorer_id: Type.Optional(ScorerIdSchema),
    community: Type.Optional({ ...ScorerIdSchema, description: 'Deprecated alias of scorer_id.' }),
    signature: Type.Optional(Type.String({ maxLength: 200, description: 'EIP-191 signature of the signing message by the address.' })),
    nonce: Type.Optional(Type.String({ maxLength: 200, description: 'Nonce of the signed signing message.' })),
  },
  { title: 'SubmitPassport' },
);

export function submitPassportRoute(instance: FastifyInstance, ctx: AppContext): void {
  const app = typed(instance);
  app.post(
    '/registry/submit-passport',
    {
      schema: {
        tags: ['scoring'],
        summary: 'Submit an address for scoring',
        description:
          'Records the submission durably, waits up to SUBMIT_WAIT_MS for the score and answers DONE with it, ' +
          'or PROCESSING (poll the score endpoint). Do not retry on timeout: scoring continues.',
        security: [{ apiKey: [] }],
        body: SubmitBody,
        response: { 200: ScoreRecordSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'submit_passports');
      const body = request.body;
      const scorerId = body.scorer_id ?? body.community;
      if (scorerId === undefined) throw new AppError('invalid_request', 'The request body is missing the required field "scorer_id".');
      const scorer = await ctx.accounts.scorerOfAccount(Number(scorerId), caller.accountId);
      const address = body.address.toLowerCase();

      if (body.signature !== undefined || scorer.requiresSignature) {
        if (!body.signature) throw new AppError('invalid_signature', 'This scorer requires a signature of the signing message by the address.');
        const signature = body.signature;
        await ctx.nonces.consume(body.nonce, caller.accountId, (message) => {
          let signer: string;
          try {
            signer = recoverPersonalSignAddress(message, signature as `0x${string}`);
          } catch {
            throw new AppError('invalid_signature', 'The signature is malformed.');
          }
          if (signer !== address) throw new AppError('invalid_signature', 'The signature was not made by the submitted address over the signing message of this nonce.');
        });
      }
      return ctx.scores.submit(scorer.id, address);
    },
  );
}
