import type { Config } from '../../config.js';
import type { Database } from '../../db/connection.js';

/** Staking amounts: the event store, the chain indexer and the per-address aggregates. */
export function createStakingServices(config: Config, database: Database) {
  void config;
  void database;
  return {};
}

export type StakingServices = ReturnType<typeof createStakingServices>;
