import type { Config } from '../config.js';
import type { Database } from '../db/connection.js';

/** Grants, bounties, exports, export authentication and the legacy bounty read. */
export function createPublicDataServices(config: Config, database: Database) {
  void config;
  void database;
  return {};
}

export type PublicDataServices = ReturnType<typeof createPublicDataServices>;
