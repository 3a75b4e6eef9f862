import type { Config } from './config.js';
import type { Database } from './db/connection.js';
import { accountService } from './scoring/accounts.js';
import { accountsRepository } from './scoring/accounts.repository.js';
import { apiKeyService } from './scoring/api-keys.js';
import { apiKeysRepository } from './scoring/api-keys.repository.js';
import { nonceService } from './scoring/nonces.js';
import { noncesRepository } from './scoring/nonces.repository.js';

/**
 * Wires repositories into domain services once per process. The HTTP server,
 * the CLI and workers all use the same context, so they share one behaviour.
 */
export function createAppContext(config: Config, database: Database) {
  const accounts = accountsRepository(database.db);
  return {
    config,
    database,
    accounts: accountService(accounts),
    apiKeys: apiKeyService(apiKeysRepository(database.db), accounts, { ttlMs: config.apiKeyCacheTtlMs }),
    nonces: nonceService(noncesRepository(database.db), config.nonceTtlSeconds),
  };
}

export type AppContext = ReturnType<typeof createAppContext>;
