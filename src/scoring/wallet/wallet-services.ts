import type { Config } from '../../config.js';
import type { Database } from '../../db/connection.js';
import type { StampService } from '../stamps.js';

export interface WalletDeps {
  stamps: StampService;
}

/** Sign-In with Ethereum sessions and the wallet's own stamp writes. */
export function createWalletServices(config: Config, database: Database, deps: WalletDeps) {
  void config;
  void database;
  void deps;
  return {};
}

export type WalletServices = ReturnType<typeof createWalletServices>;
