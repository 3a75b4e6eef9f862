import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WalletOwnership } from '../chain/wallet-ownership.js';
import { AppError } from '../errors.js';
import type { Account, AccountService } from '../scoring/accounts/accounts.service.js';
import type { PortalSignup } from '../config/portal.js';
import type { SignInPurpose, SiweSite } from '../sessions/siwe-checks.js';
import { type SignInSession, type SiweNonceOffer, siweSignInService } from '../sessions/siwe-sign-in.service.js';
import type { SignInRepository } from '../sessions/sign-in.repository.js';

export const PORTAL_SIWE_STATEMENT = 'Sign in to the Stampgate developer portal to manage your scorers and API keys.';

/** Managing the account (scorers, API keys): what a portal sign-in message is for. */
export const PORTAL_SIGN_IN: SignInPurpose = {
  statement: PORTAL_SIWE_STATEMENT,
  statementRequired: true,
  uriPath: '/portal',
  nonceRoute: 'GET /v2/account/siwe-nonce',
};

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

const portalSession = (session: SignInSession, token: string): PortalSession => ({
  accountId: session.accountId as number,
  address: session.address,
  expiresAt: session.expiresAt,
  csrfToken: csrfTokenOf(token),
});

/**
 * Developer portal sign-in with Ethereum (the shared flow of src/sessions, checked as strictly
 * as the wallet sign-in) and the sessions it opens. The first sign-in of a wallet creates the
 * account it owns when sign-up is open. Session tokens are 256 random bits, shown once (in the cookie).
 */
export function portalSessionService(repo: SignInRepository, accounts: AccountService, options: PortalSessionOptions) {
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

  const signIn = siweSignInService(repo, PORTAL_SIGN_IN, {
    sessionTtlSeconds: options.sessionTtlSeconds,
    nonceTtlSeconds: options.nonceTtlSeconds,
    allowedChainIds: options.allowedChainIds,
    ownership: options.ownership,
    accountFor: async (address) => (await accountFor(address)).id,
    ...(options.clock ? { clock: options.clock } : {}),
  });

  return {
    issueNonce: (site: SiweSite): Promise<SiweNonceOffer> => signIn.issueNonce(site),

    /** Checks a signed message (cheap checks first), then opens a session; a refusal consumes nothing. */
    async signIn(input: { message: string; signature: string }, site: SiweSite) {
      const { token, session } = await signIn.signIn(input, site);
      return { token, session: portalSession(session, token) };
    },

    /** The live session of a cookie token, or null. */
    async resolve(token: string | undefined): Promise<PortalSession | null> {
      const session = await signIn.resolve(token);
      return session ? portalSession(session, token as string) : null;
    },

    signOut: (token: string): Promise<boolean> => signIn.signOut(token),
  };
}

export type PortalSessionService = ReturnType<typeof portalSessionService>;
