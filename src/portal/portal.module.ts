import type { FastifyBaseLogger } from 'fastify';
import type { WalletOwnership } from '../chain/wallet-ownership.js';
import type { Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import type { AccountService } from '../scoring/accounts/accounts.service.js';
import type { ApiKeyService } from '../scoring/accounts/api-keys.service.js';
import { signInRepository } from '../sessions/sign-in.repository.js';
import { accountPortalService } from './account-portal.service.js';
import { portalSessionService } from './portal-sessions.service.js';
import { usageCounter } from './usage-counter.js';
import { usageRepository } from './usage.repository.js';

export interface PortalDeps {
  accounts: AccountService;
  apiKeys: ApiKeyService;
  ownership: WalletOwnership;
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  clock?: () => number;
}

/** Developer portal sessions, account management for the portal and API keys, and per-key usage counters. */
export function createPortalServices(config: Config, database: Database, deps: PortalDeps) {
  const clock = deps.clock ?? Date.now;
  const usageRepo = usageRepository(database.db);
  const usage = usageCounter(usageRepo, { flushMs: config.usageFlushMs, clock, log: deps.log });
  return {
    sessions: portalSessionService(signInRepository(database, 'portal'), deps.accounts, {
      sessionTtlSeconds: config.portalSessionTtlSeconds,
      nonceTtlSeconds: config.nonceTtlSeconds,
      allowedChainIds: config.siweAllowedChainIds,
      signup: config.portalSignup,
      ownership: deps.ownership,
      clock,
    }),
    usage,
    account: accountPortalService({ accounts: deps.accounts, apiKeys: deps.apiKeys, usageRepo, usage, clock }),
  };
}

export type PortalServices = ReturnType<typeof createPortalServices>;
