import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { WalletOwnership } from '../chain/wallet-ownership.js';
import { AppError } from '../errors.js';
import type { Account, AccountService } from '../scoring/accounts/accounts.service.js';
import { formatScoringTimestamp } from '../scoring/timestamps.js';
import { parseSiweMessageStrict } from '../scoring/wallet/siwe.js';
import type { SiweNonceOffer, SiweSite } from '../scoring/wallet/wallet-sessions.service.js';
import type { PortalSignup } from '../config/portal.js';
import type { PortalRepository } from './portal.repository.js';
import { checkSiweFields } from '../scoring/wallet/siwe-checks.js';

export const PORTAL_SIWE_STATEMENT = 'Sign in to the Stampgate developer portal to manage your scorers and API keys.';

/** A live portal session: whose account, and the token that must come back on every state change. */
export interface PortalSession {
  accountId: number;
  /** Lower-case address that signed in. */
  address: string;
  expiresAt: number;
  csrfToken: string;
}

export interface PortalSessionOptions {
  sessionTtlSeconds: number;
  nonceTtlSeconds: number;
  allowedChainIds: readonly number[];
  signup: PortalSignup;
  /** The shared wallet ownership proof: EOA, ERC-1271 and ERC-6492 signatures. */
  ownership: WalletOwnership;
  clock?: () => number;
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const sweepEvery = 200;

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The CSRF token of a session, derived from its (secret) session token: nothing more to store,
 * and a page that cannot read the httpOnly cookie cannot compute it either.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('stampgate-portal-csrf').digest('base64url');
}

export function isCsrfTokenOf(sessionToken: string, presented: string): boolean {
  const expected = Buffer.from(csrfTokenOf(sessionToken));
  const actual = Buffer.from(presented);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * Developer portal sign-in with Ethereum (EIP-4361, checked as strictly as the wallet sign-in)
 * and the sessions it opens. The first sign-in of a wallet creates the account it owns when
 * sign-up is open. Session tokens are 256 random bits, shown once (in the cookie).
 */
export function portalSessionService(repo: PortalRepository, accounts: AccountService, options: PortalSessionOptions) {
  const clock = options.clock ?? Date.now;
  let issuedSinceSweep = 0;

  async function accountFor(address: string): Promise<Account> {
    const existing = await accounts.accountOfOwner(address);
    if (existing) return existing;
    if (options.signup === 'closed') {
      throw new AppError('permission_denied', `The wallet ${address} owns no account on this server, and sign-up is closed (PORTAL_SIGNUP=closed).`);
    }
    try {
      return await accounts.createAccount(`Wallet ${address}`, address);
    } catch (error) {
      // Two first sign-ins at once: the other one created it.
      const raced = await accounts.accountOfOwner(address);
      if (raced) return raced;
      throw error;
    }
  }

  return {
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
        uri: `${site.origin}/portal`,
        chainId: options.allowedChainIds[0]!,
        statement: PORTAL_SIWE_STATEMENT,
        expiresAt: formatScoringTimestamp(expiresAt),
      };
    },

    /** Checks a signed message (cheap checks first), then opens a session; a refusal consumes nothing. */
    async signIn(input: { message: string; signature: string }, site: SiweSite) {
      const fields = parseSiweMessageStrict(input.message);
      const now = clock();
      checkSiweFields(fields, site, options.allowedChainIds, now);
      const invalidNonce = new AppError('invalid_nonce', 'The message\'s nonce is unknown, expired or already used; get a new one from GET /v2/account/siwe-nonce.');
      options.ownership.checkShape(input.signature);
      if (!(await repo.isNonceUsable(fields.nonce, now))) throw invalidNonce;
      // Outside any transaction: a contract wallet's check is an RPC call. The nonce is consumed
      // below, with the session, only when it passed; a 502 leaves it usable.
      await options.ownership.proveWalletOwnership({
        address: fields.address,
        message: input.message,
        signature: input.signature,
        chainId: fields.chainId,
        signedBy: 'the message\'s address over this exact message',
      });
      const address = fields.address.toLowerCase();
      const account = await accountFor(address);
      const token = randomBytes(32).toString('base64url');
      const expiresAt = now + options.sessionTtlSeconds * 1000;
      const created = await repo.consumeNonceAndCreateSession(
        fields.nonce,
        { token_hash: tokenHash(token), account_id: account.id, address, created_at: now, expires_at: expiresAt },
        now,
      );
      if (!created) throw invalidNonce;
      return { token, session: { accountId: account.id, address, expiresAt, csrfToken: csrfTokenOf(token) } satisfies PortalSession };
    },

    /** The live session of a cookie token, or null. */
    async resolve(token: string | undefined): Promise<PortalSession | null> {
      if (token === undefined || !TOKEN.test(token)) return null;
      const row = await repo.findSession(tokenHash(token), clock());
      return row ? { accountId: row.account_id, address: row.address, expiresAt: row.expires_at, csrfToken: csrfTokenOf(token) } : null;
    },

    async signOut(token: string): Promise<boolean> {
      if (!TOKEN.test(token)) return false;
      return repo.deleteSession(tokenHash(token));
    },
  };
}

export type PortalSessionService = ReturnType<typeof portalSessionService>;
