import { randomBytes } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { NoncesRepository } from './nonces.repository.js';

export interface SigningMessage {
  message: string;
  nonce: string;
}

const noncePattern = /^[0-9a-f]{64}$/;
// Expired nonces are swept now and then rather than on every issue, to keep issuing cheap.
const sweepEvery = 200;

/** The exact text a wallet signs; rebuilt from the nonce when a signature is checked. */
export function signingMessageFor(nonce: string): string {
  return (
    'I agree to let Stampgate read the stamps of this wallet and compute its passport score.\n' +
    'Signing costs nothing and grants no access to funds.\n' +
    '\n' +
    `Nonce: ${nonce}`
  );
}

function unusable(): AppError {
  return new AppError('invalid_nonce', 'The nonce is unknown, expired or already used, or was issued to another API key\'s account.');
}

export function nonceService(repo: NoncesRepository, ttlSeconds: number, clock: () => number = Date.now) {
  let issuedSinceSweep = 0;

  /** The cheap check, before any lookup: a nonce is given and has the shape this service issues. */
  function requireWellFormed(nonce: string | undefined): string {
    if (!nonce) throw new AppError('invalid_nonce', 'A nonce from GET /registry/signing-message is required with a signature.');
    if (!noncePattern.test(nonce)) throw unusable();
    return nonce;
  }

  /**
   * The signing message of a nonce that is unused, unexpired and bound to `accountId`;
   * consumes nothing. For any other account the nonce does not exist.
   */
  async function usableMessage(nonce: string | undefined, accountId: number): Promise<string> {
    const wellFormed = requireWellFormed(nonce);
    if (!(await repo.findUsable(wellFormed, accountId, clock()))) throw unusable();
    return signingMessageFor(wellFormed);
  }

  /**
   * Consumes the nonce in one conditional update (`used_at is null`), so of two requests
   * that both checked a signature over it only one gets through; the other gets invalid_nonce.
   */
  async function markUsed(nonce: string, accountId: number): Promise<void> {
    if (!(await repo.markUsed(nonce, accountId, clock()))) {
      throw new AppError('invalid_nonce', 'The nonce is unknown, expired or already used.');
    }
  }

  return {
    /** A fresh nonce bound to `accountId`, the account whose API key asked for it. */
    async issue(accountId: number): Promise<SigningMessage> {
      const nonce = randomBytes(32).toString('hex');
      const now = clock();
      await repo.insert(nonce, accountId, now, now + ttlSeconds * 1000);
      if (++issuedSinceSweep >= sweepEvery) {
        issuedSinceSweep = 0;
        await repo.deleteExpiredBefore(now);
      }
      return { message: signingMessageFor(nonce), nonce };
    },

    requireWellFormed,
    usableMessage,
    markUsed,

    /**
     * Checks that `nonce` is usable, lets `verify` check the signature over its message, and
     * only then consumes it, so a failed check leaves it usable. No transaction spans
     * `verify`: it may wait seconds on an RPC endpoint.
     */
    async consume(nonce: string | undefined, accountId: number, verify: (message: string) => void | Promise<void>): Promise<void> {
      const message = await usableMessage(nonce, accountId);
      await verify(message);
      await markUsed(nonce as string, accountId);
    },
  };
}

export type NonceService = ReturnType<typeof nonceService>;
