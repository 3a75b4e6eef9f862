import { createHash, randomBytes } from 'node:crypto';
import type { WalletOwnership } from '../chain/wallet-ownership.js';
import { AppError } from '../errors.js';
import { formatScoringTimestamp } from '../scoring/timestamps.js';
import { parseSiweMessageStrict } from './siwe.js';
import { checkSignInPurpose, checkSiweFields, offeredUri, type SignInPurpose, type SiweSite } from './siwe-checks.js';
import type { SignInRepository } from './sign-in.repository.js';

export interface SiweNonceOffer {
  nonce: string;
  domain: string;
  uri: string;
  chainId: number;
  statement: string;
  expiresAt: string;
}

/** A live session: the address that signed in, when it ends, and the account it acts for (if the flow has one). */
export interface SignInSession {
  /** Lower-case address that signed in. */
  address: string;
  expiresAt: number;
  accountId?: number;
}

export interface SiweSignInOptions {
  sessionTtlSeconds: number;
  nonceTtlSeconds: number;
  /** The Chain IDs a message may name (SIWE_ALLOWED_CHAIN_IDS); the first is offered. */
  allowedChainIds: readonly number[];
  /** The wallet ownership proof: EOA, ERC-1271 and ERC-6492 signatures. */
  ownership: WalletOwnership;
  /**
   * The account a proven address acts for, when the flow's sessions act for one (the portal
   * creates it on a first sign-in); runs after every check, before the nonce is consumed.
   */
  accountFor?: (address: string) => Promise<number>;
  clock?: () => number;
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
// Expired nonces and sessions are swept now and then rather than on every issue.
const sweepEvery = 200;

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Sign-In with Ethereum for one flow (its purpose and its tables): single-use expiring nonces,
 * the strict checks of a signed message, and the sessions it opens. Tokens are 256 random bits,
 * shown once; only their SHA-256 is stored.
 */
export function siweSignInService(repo: SignInRepository, purpose: SignInPurpose, options: SiweSignInOptions) {
  const clock = options.clock ?? Date.now;
  let issuedSinceSweep = 0;
  const invalidNonce = () =>
    new AppError('invalid_nonce', `The message's nonce is unknown, expired or already used; get a new one from ${purpose.nonceRoute}.`);

  return {
    /** A fresh nonce and what the wallet needs to build its message. */
    async issueNonce(site: SiweSite): Promise<SiweNonceOffer> {
      const nonce = randomBytes(32).toString('hex');
      const now = clock();
      const expiresAt = now + options.nonceTtlSeconds * 1000;
      await repo.insertNonce(nonce, now, expiresAt);
      if (++issuedSinceSweep >= sweepEvery) {
        issuedSinceSweep = 0;
        await repo.sweepExpired(now);
      }
      return {
        nonce,
        domain: site.host,
        uri: offeredUri(purpose, site),
        chainId: options.allowedChainIds[0]!,
        statement: purpose.statement,
        expiresAt: formatScoringTimestamp(expiresAt),
      };
    },

    /**
     * Checks a signed EIP-4361 message (cheap checks first) and opens a session for its
     * address. The nonce is consumed only when every check passed; a refusal stores nothing.
     */
    async signIn(input: { message: string; signature: string }, site: SiweSite): Promise<{ token: string; session: SignInSession }> {
      const fields = parseSiweMessageStrict(input.message);
      const now = clock();
      checkSiweFields(fields, site, options.allowedChainIds, now);
      checkSignInPurpose(fields, purpose, site);
      options.ownership.checkShape(input.signature);
      if (!(await repo.isNonceUsable(fields.nonce, now))) throw invalidNonce();
      // No transaction is open here: a contract wallet's check is an RPC call. The nonce is
      // consumed below, with the session, only if it passed; a 502 leaves it usable.
      await options.ownership.proveWalletOwnership({
        address: fields.address,
        message: input.message,
        signature: input.signature,
        chainId: fields.chainId,
        signedBy: 'the message\'s address over this exact message',
      });
      const address = fields.address.toLowerCase();
      const accountId = options.accountFor ? await options.accountFor(address) : undefined;
      const token = randomBytes(32).toString('base64url');
      const expiresAt = now + options.sessionTtlSeconds * 1000;
      const created = await repo.consumeNonceAndCreateSession(
        fields.nonce,
        { token_hash: tokenHash(token), address, created_at: now, expires_at: expiresAt, ...(accountId !== undefined ? { account_id: accountId } : {}) },
        now,
      );
      if (!created) throw invalidNonce();
      return { token, session: { address, expiresAt, ...(accountId !== undefined ? { accountId } : {}) } };
    },

    /** The live session of a token, or null (missing, malformed, unknown or expired). */
    async resolve(token: string | undefined): Promise<SignInSession | null> {
      if (token === undefined || !TOKEN.test(token)) return null;
      const row = await repo.findSession(tokenHash(token), clock());
      if (!row) return null;
      return { address: row.address, expiresAt: row.expires_at, ...(row.account_id !== undefined ? { accountId: row.account_id } : {}) };
    },

    /** Ends the session of a token; false when there was none. */
    async signOut(token: string): Promise<boolean> {
      if (!TOKEN.test(token)) return false;
      return repo.deleteSession(tokenHash(token));
    },
  };
}

export type SiweSignInService = ReturnType<typeof siweSignInService>;
