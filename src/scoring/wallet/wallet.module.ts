import { walletOwnership, type WalletOwnership } from '../../chain/wallet-ownership.js';
import type { Config } from '../../config/index.js';
import type { Database } from '../../db/connection.js';
import type { StampService } from '../stamps/stamps.service.js';
import { signInRepository } from '../../sessions/sign-in.repository.js';
import { stampsRepository } from '../stamps/stamps.repository.js';
import { walletSessionService } from './wallet-sessions.service.js';
import { walletStampService } from './wallet-stamps.service.js';

export interface WalletDeps {
  stamps: StampService;
  /** The process's wallet signature checks (built from the configuration when absent). */
  ownership?: WalletOwnership;
  /** Epoch milliseconds; tests pass a fake clock. */
  clock?: () => number;
}

/** Sign-In with Ethereum sessions and the wallet's own stamp writes. */
export function createWalletServices(config: Config, database: Database, deps: WalletDeps) {
  // The wallet's own stamp reads and soft deletes: queries of the stamps repository, the table's one writer.
  const repo = stampsRepository(database);
  const clock = deps.clock ?? Date.now;
  const ownership = deps.ownership ?? walletOwnership(config);
  return {
    /** Proves a wallet signed a text (EOA, ERC-1271, ERC-6492): every sign-in uses it, the portal's included. */
    ownership,
    sessions: walletSessionService(signInRepository(database, 'wallet'), {
      sessionTtlSeconds: config.walletSessionTtlSeconds,
      nonceTtlSeconds: config.nonceTtlSeconds,
      allowedChainIds: config.siweAllowedChainIds,
      ownership,
      clock,
    }),
    stamps: walletStampService(repo, deps.stamps, clock),
  };
}

export type WalletServices = ReturnType<typeof createWalletServices>;
