import type { Static } from '@sinclair/typebox';
import type { WalletOwnership } from '../../chain/wallet-ownership.js';
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
  /** Wallet signature checks: EOA, and ERC-1271 / ERC-6492 when an endpoint is configured. */
  ownership: WalletOwnership;
}

/** What a submission must pass before it is scored: the scorer of the caller's account, and the signature when given or required. */
export function submissionService(deps: SubmissionDeps) {
  /**
   * Cheap checks first (nonce shape, signature shape and cap, then the nonce's row), the
   * signature check next with no transaction open (a contract wallet's check is an RPC call),
   * and the nonce consumed last by a conditional update: a refused or unverifiable signature
   * (400, 502) leaves the nonce usable, and of two racing submissions only one consumes it.
   */
  async function proveSignature(accountId: number, address: string, signature: string, nonce: string | undefined): Promise<void> {
    const wellFormed = deps.nonces.requireWellFormed(nonce);
    deps.ownership.checkShape(signature);
    const message = await deps.nonces.usableMessage(wellFormed, accountId);
    await deps.ownership.proveWalletOwnership({
      address,
      message,
      signature,
      signedBy: 'the submitted address over the signing message of this nonce',
    });
    await deps.nonces.markUsed(wellFormed, accountId);
  }

  return {
    async submit(accountId: number, body: SubmitPassport): Promise<ScoreRecord> {
      const scorerId = body.scorer_id ?? body.community;
      if (scorerId === undefined) throw new AppError('invalid_request', 'The request body is missing the required field "scorer_id".');
      const scorer = await deps.accounts.scorerOfAccount(Number(scorerId), accountId);
      const address = body.address.toLowerCase();

      if (body.signature !== undefined || scorer.requiresSignature) {
        if (!body.signature) throw new AppError('invalid_signature', 'This scorer requires a signature of the signing message by the address.');
        await proveSignature(accountId, address, body.signature, body.nonce);
      }
      return deps.scores.submit(scorer.id, address);
    },
  };
}

export type SubmissionService = ReturnType<typeof submissionService>;
