import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { Environment } from '../config/server.js';
import { AppError } from '../errors.js';
import { loadOrCreateKeyFile } from '../scoring/stamps/dev-issuer.js';
import type { SiweSite } from '../sessions/siwe-checks.js';
import type { PortalSessionService } from './portal-sessions.service.js';

/**
 * The development test wallet: a key this server generates and keeps in DATA_DIR, so that the
 * portal can be tried without a browser wallet extension. It signs an ordinary Sign-In with
 * Ethereum message which goes through the same checks as a real wallet's. Never in production:
 * whoever can reach the server would sign in as this one wallet, and its key sits on the server.
 */
export const DEV_WALLET_KEY_FILE = 'dev-portal-wallet.key';

export interface DevWalletSettings {
  env: Environment;
  dataDir: string;
}

export function devWalletRefused(): AppError {
  return new AppError('permission_denied', 'The development test wallet exists only when STAMPGATE_ENV=development; sign in with your own wallet.');
}

export function devWalletService(settings: DevWalletSettings, sessions: Pick<PortalSessionService, 'issueNonce' | 'signIn'>) {
  const available = settings.env === 'development';
  let account: ReturnType<typeof privateKeyToAccount> | null = null;
  const accountOf = async () => (account ??= privateKeyToAccount(await loadOrCreateKeyFile(settings.dataDir, DEV_WALLET_KEY_FILE)));

  return {
    available,

    /** The test wallet's address (its key is created on first use), or null outside development. */
    async address(): Promise<string | null> {
      return available ? (await accountOf()).address.toLowerCase() : null;
    },

    /** Signs a fresh portal sign-in message with the test wallet and opens its session. */
    async signIn(site: SiweSite) {
      if (!available) throw devWalletRefused();
      const wallet = await accountOf();
      const offer = await sessions.issueNonce(site);
      const message = createSiweMessage({
        address: wallet.address,
        chainId: offer.chainId,
        domain: offer.domain,
        nonce: offer.nonce,
        uri: offer.uri,
        statement: offer.statement,
        version: '1',
        issuedAt: new Date(),
        expirationTime: new Date(offer.expiresAt),
      });
      return sessions.signIn({ message, signature: await wallet.signMessage({ message }) }, site);
    },
  };
}

export type DevWalletService = ReturnType<typeof devWalletService>;
