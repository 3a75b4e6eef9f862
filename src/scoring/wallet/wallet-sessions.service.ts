import { createHash, randomBytes } from 'node:crypto';
import { walletOwnership, type WalletOwnership } from '../../chain/wallet-ownership.js';
import { DEFAULT_MAX_SIGNATURE_BYTES } from '../../chain/wallet-signatures.js';
import { AppError } from '../../errors.js';
import { formatScoringTimestamp } from '../timestamps.js';
import { parseSiweMessageStrict } from './siwe.js';
import { checkSiweFields } from './siwe-checks.js';
import type { WalletRepository } from './wallet.repository.js';

/** Where this service is reached, which a sign-in message must name. */
export interface SiweSite {
  /** `https:` or `http:`. */
  protocol: string;
  /** Lower-case authority (host and a non-default port): what the message's domain must be. */
  host: string;
  /** `scheme://host[:port]`: the message's URI must be on it. */
  origin: string;
  /** Suggested URI for the message. */
  uri: string;
}

/** The site of a base URL (`PUBLIC_BASE_URL`, else the request's scheme and Host). */
export function siweSite(baseUrl: string): SiweSite {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new AppError('invalid_request', 'The request\'s Host header does not name a valid host.');
  }
  // Rebuilt from the parsed URL, so that the offered URI always starts with the origin as spelt here.
  return { protocol: url.protocol, host: url.host, origin: url.origin, uri: `${url.origin}${url.pathname.replace(/\/+$/, '')}` };
}

export interface SiweNonceOffer {
  nonce: string;
  domain: string;
  uri: string;
  chainId: number;
  statement: string;
  expiresAt: string;
}

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
export { SIWE_CLOCK_SKEW_MS } from './siwe-checks.js';
// Expired nonces and sessions are swept now and then rather than on every issue.
const sweepEvery = 200;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Sign-In with Ethereum: single-use expiring nonces, the checks of a signed message, and the
 * short-lived session tokens it earns. Tokens are 256 random bits, shown once; only their
 * SHA-256 is stored.
 */
export function walletSessionService(repo: WalletRepository, options: SessionOptions) {
  const clock = options.clock ?? Date.now;
  const allowedChainIds = options.allowedChainIds ?? [SIWE_CHAIN_ID];
  const ownership =
    options.ownership ??
    walletOwnership({ smartWalletRpcUrl: null, smartWalletRpcTimeoutMs: 5000, smartWalletMaxSignatureBytes: DEFAULT_MAX_SIGNATURE_BYTES });
  let issuedSinceSweep = 0;

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
        uri: site.uri,
        chainId: allowedChainIds[0]!,
        statement: SIWE_STATEMENT,
        expiresAt: formatScoringTimestamp(expiresAt),
      };
    },

    /**
     * Checks a signed EIP-4361 message and opens a session for its address. The nonce is
     * consumed only when every check passed; a refusal stores nothing.
     */
    async signIn(input: { message: string; signature: string }, site: SiweSite): Promise<{ token: string; address: string; expiresAt: string }> {
      const fields = parseSiweMessageStrict(input.message);
      const now = clock();
      checkSiweFields(fields, site, allowedChainIds, now);
      ownership.checkShape(input.signature);
      if (!(await repo.isNonceUsable(fields.nonce, now))) {
        throw new AppError('invalid_nonce', 'The message\'s nonce is unknown, expired or already used; get a new one from GET /registry/wallet/siwe-nonce.');
      }
      // No transaction is open here: a contract wallet's check is an RPC call. The nonce is
      // consumed below, with the session, only if it passed; a 502 leaves it usable.
      await ownership.proveWalletOwnership({
        address: fields.address,
        message: input.message,
        signature: input.signature,
        chainId: fields.chainId,
        signedBy: 'the message\'s address over this exact message',
      });
      const address = fields.address.toLowerCase();

      const token = randomBytes(32).toString('base64url');
      const expiresAt = now + options.sessionTtlSeconds * 1000;
      const created = await repo.consumeNonceAndCreateSession(
        fields.nonce,
        { token_hash: tokenHash(token), address, created_at: now, expires_at: expiresAt },
        now,
      );
      if (!created) {
        throw new AppError('invalid_nonce', 'The message\'s nonce is unknown, expired or already used; get a new one from GET /registry/wallet/siwe-nonce.');
      }
      return { token, address, expiresAt: formatScoringTimestamp(expiresAt) };
    },

    /** The live session of a token, or null (missing, malformed, unknown or expired). */
    async resolve(token: string | undefined): Promise<WalletSession | null> {
      if (token === undefined || !TOKEN.test(token)) return null;
      const row = await repo.findSession(tokenHash(token), clock());
      return row ? { address: row.address, expiresAt: row.expires_at } : null;
    },

    /** Ends the session of a token; false when there was none. */
    async signOut(token: string): Promise<boolean> {
      if (!TOKEN.test(token)) return false;
      return repo.deleteSession(tokenHash(token));
    },
  };
}

export type WalletSessionService = ReturnType<typeof walletSessionService>;
