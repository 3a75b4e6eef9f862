import type { Static } from '@sinclair/typebox';
import { recoverPersonalSignAddress } from '../../chain/signatures.js';
import { AppError } from '../../errors.js';
import type { AccountService } from '../accounts/accounts.service.js';
import type { NonceService } from './nonces.service.js';
import type { ScoreRecord } from './score-record.schema.js';
import type { ScoreService } from './scores.service.js';
import type { SubmitPassportSchema } from './submission.schema.js';

export type SubmitPassport = Static<typeof SubmitPassportSchema>;

export interface SubmissionDeps {
  accounts: AccountService;
  nonces: NonceService;
  scores: ScoreService;
}

/** What a submission must pass before it is scored: the scorer of the caller's account, and the signature when given or required. */
export function submissionService(deps: SubmissionDeps) {
  return {
    async submit(accountId: number, body: SubmitPassport): Promise<ScoreRecord> {
      const scorerId = body.scorer_id ?? body.community;
      if (scorerId === undefined) throw new AppError('invalid_request', 'The request body is missing the required field "scorer_id".');
      const scorer = await deps.accounts.scorerOfAccount(Number(scorerId), accountId);
      const address = body.address.toLowerCase();

      if (body.signature !== undefined || scorer.requiresSignature) {
        if (!body.signature) throw new AppError('invalid_signature', 'This scorer requires a signature of the signing message by the address.');
        const signature = body.signature;
        await deps.nonces.consume(body.nonce, accountId, (message) => {
          let signer: string;
          try {
            signer = recoverPersonalSignAddress(message, signature as `0x${string}`);
          } catch {
            throw new AppError('invalid_signature', 'The signature is malformed.');
          }
          if (signer !== address) throw new AppError('invalid_signature', 'The signature was not made by the submitted address over the signing message of this nonce.');
        });
      }
      return deps.scores.submit(scorer.id, address);
    },
  };
}

export type SubmissionService = ReturnType<typeof submissionService>;
