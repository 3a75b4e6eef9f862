import { walletOwnership, type WalletOwnership } from '../../chain/wallet-ownership.js';
import { DEFAULT_MAX_SIGNATURE_BYTES } from '../../chain/wallet-signatures.js';
import type { SignInPurpose, SiweSite } from '../../sessions/siwe-checks.js';
import { type SiweNonceOffer, siweSignInService } from '../../sessions/siwe-sign-in.service.js';
import type { SignInRepository } from '../../sessions/sign-in.repository.js';
import { formatScoringTimestamp } from '../timestamps.js';

export interface WalletSession {
  /** Lower-case address that signed in. */
  address: string;
  expiresAt: number;
}

export interface SessionOptions {
  sessionTtlSeconds: number;
  nonceTtlSeconds: number;
  /** The Chain IDs a message may name (SIWE_ALLOWED_CHAIN_IDS); the first is offered. */
  allowedChainIds?: readonly number[];
  /** Signature checks; default: EOA signatures only. */
  ownership?: WalletOwnership;
  clock?: () => number;
}

export const SIWE_STATEMENT = 'Sign in to Stampgate to add, replace and delete the stamps of this wallet.';
/** The chain offered and, unless SIWE_ALLOWED_CHAIN_IDS says otherwise, the only one accepted. */
export const SIWE_CHAIN_ID = 1;

/** The wallet's own stamp writes: what a wallet sign-in message is for. */
export const WALLET_SIGN_IN: SignInPurpose = {
  statement: SIWE_STATEMENT,
  statementRequired: false,
  uriPath: null,
  nonceRoute: 'GET /registry/wallet/siwe-nonce',
};

/**
 * Wallet sign-in (the shared Sign-In with Ethereum flow of src/sessions, for stamp writes): the
 * short-lived bearer sessions of a wallet address, in the wallet's own tables.
 */
export function walletSessionService(repo: SignInRepository, options: SessionOptions) {
  const signIn = siweSignInService(repo, WALLET_SIGN_IN, {
    sessionTtlSeconds: options.sessionTtlSeconds,
    nonceTtlSeconds: options.nonceTtlSeconds,
    allowedChainIds: options.allowedChainIds ?? [SIWE_CHAIN_ID],
    ownership:
      options.ownership ??
      walletOwnership({ smartWalletRpcUrl: null, smartWalletRpcTimeoutMs: 5000, smartWalletMaxSignatureBytes: DEFAULT_MAX_SIGNATURE_BYTES }),
    ...(options.clock ? { clock: options.clock } : {}),
  });

  return {
    /** A fresh nonce and what the wallet needs to build its message. */
    issueNonce: (site: SiweSite): Promise<SiweNonceOffer> => signIn.issueNonce(site),

    /** Checks a signed EIP-4361 message and opens a session for its address; a refusal stores nothing. */
    async signIn(input: { message: string; signature: string }, site: SiweSite): Promise<{ token: string; address: string; expiresAt: string }> {
      const { token, session } = await signIn.signIn(input, site);
      return { token, address: session.address, expiresAt: formatScoringTimestamp(session.expiresAt) };
    },

    /** The live session of a token, or null (missing, malformed, unknown or expired). */
    async resolve(token: string | undefined): Promise<WalletSession | null> {
      const session = await signIn.resolve(token);
      return session ? { address: session.address, expiresAt: session.expiresAt } : null;
    },

    /** Ends the session of a token; false when there was none. */
    signOut: (token: string): Promise<boolean> => signIn.signOut(token),
  };
}

export type WalletSessionService = ReturnType<typeof walletSessionService>;
