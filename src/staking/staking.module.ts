import type { PublicClient } from 'viem';
import { createRpcClient } from '../chain/rpc.js';
import type { Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import { stakeService } from './stake-amounts.service.js';
import { stakeEventsRepository } from './stake-events.repository.js';
import { StakingIndexer } from './staking-indexer.js';

export interface StakingServicesOptions {
  /** The client the indexer reads with (default: one over STAKING_RPC_URL). */
  client?: PublicClient;
  clock?: () => number;
}

/**
 * Staking amounts: the event store, the chain indexer and the per-address aggregates.
 * `indexer` is null unless both STAKING_RPC_URL and STAKING_CONTRACT_ADDRESS are set
 * (events can still be imported with `stampgate stake import`).
 */
export function createStakingServices(config: Config, database: Database, options: StakingServicesOptions = {}) {
  const events = stakeEventsRepository(database, config.stakingContractAddress);
  const clock = options.clock ?? Date.now;
  const indexer =
    config.stakingRpcUrl && config.stakingContractAddress
      ? new StakingIndexer(
          options.client ?? createRpcClient(config.stakingRpcUrl, { timeoutMs: config.outboundTimeoutMs, retryCount: 2 }),
          events,
          {
            rpcUrl: config.stakingRpcUrl,
            contractAddress: config.stakingContractAddress,
            startBlock: config.stakingStartBlock,
            confirmations: config.stakingConfirmations,
            blockRange: config.stakingBlockRange,
            pollMs: config.stakingPollMs,
          },
          clock,
        )
      : null;
  return {
    events,
    stakes: stakeService(events, clock),
    indexer,
  };
}

export type StakingServices = ReturnType<typeof createStakingServices>;
