import { randomBytes } from 'node:crypto';
import type { Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import { bountiesRepository } from './bounties/bounties.repository.js';
import { bountyService } from './bounties/bounties.service.js';
import { MemoryPublicCacheStore, PublicCache, type PublicCacheStore } from './cache.js';
import { exportAuthService } from './exports/export-auth.service.js';
import { exportCredentialsRepository } from './exports/export-credentials.repository.js';
import { exportService } from './exports/exports.service.js';
import { exportsRepository } from './exports/exports.repository.js';
import { grantsRepository } from './grants/grants.repository.js';
import { grantService } from './grants/grants.service.js';
import { importService, type ImportResult } from './import/import.service.js';
import { oauthLogin } from './exports/oauth.js';
import { legacyBountyReader } from '../chain/legacy-bounty.js';
import { legacyBountyService } from './bounties/legacy-bounty.service.js';

export interface PublicDataOptions {
  /** Storage of cached responses; in memory (per process) by default. */
  cacheStore?: PublicCacheStore;
  /** Passes this process's cache invalidations on to the others. */
  announce?: (prefixes: string[]) => Promise<void>;
  clock?: () => number;
}

/** Grants, bounties, exports, export authentication and the legacy bounty read. */
export function createPublicDataModule(config: Config, database: Database, options: PublicDataOptions = {}) {
  const clock = options.clock ?? Date.now;
  const cache = new PublicCache(options.cacheStore ?? new MemoryPublicCacheStore({ clock, maxBytes: config.publicCacheMaxBytes }), config.publicCacheTtlSeconds, clock, options.announce);
  const exportAuth = exportAuthService(exportCredentialsRepository(database.db), clock);
  const imports = importService(database, cache, clock);
  return {
    cache,
    /** Signs session cookies: SESSION_SECRET, or random per process (development; sessions end with the process). */
    sessionSecret: config.sessionSecret ?? randomBytes(32).toString('base64url'),
    bounties: bountyService(bountiesRepository(database.db, database.dialect, database.reads), cache, clock),
    grants: grantService(grantsRepository(database.db, database.dialect), cache),
    exports: exportService(exportsRepository(database.db), exportAuth, cache, clock),
    exportAuth,
    login: oauthLogin(config, clock),
    /** Reads the legacy on-chain bounty index; answers not_found when ETH_RPC_URL or the index address is unset. */
    legacyBounties: legacyBountyService(
      legacyBountyReader({ rpcUrl: config.ethRpcUrl, indexAddress: config.legacyBountyIndexAddress, timeoutMs: config.outboundTimeoutMs }),
      cache,
    ),
    imports,

    /** In development, loads assets/demo-public-data.json into a database without public data; null otherwise. */
    async loadDemoDataIfEmpty(): Promise<ImportResult | null> {
      if (config.env !== 'development') return null;
      return imports.loadDemoDataIfEmpty();
    },
  };
}

export type PublicDataModule = ReturnType<typeof createPublicDataModule>;
