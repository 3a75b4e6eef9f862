/** Staking settings: the indexer and the stake routes. */
import { BadValue, forExample, integer, optionalContractAddress, optionalUrl, type Settings } from './parse.js';

export interface StakingConfig {
  governanceToken: string;
  stakeEventsRateLimitPerMinute: number;
  stakingRpcUrl: string | null;
  stakingContractAddress: string | null;
  stakingStartBlock: number;
  stakingConfirmations: number;
  stakingBlockRange: number;
  stakingPollMs: number;
}

export const stakingSettings: Settings<StakingConfig> = {
  governanceToken: {
    key: 'governanceToken',
    name: 'GOVERNANCE_TOKEN',
    description: 'Symbol in the staking route `/registry/{token}-stake/{address}` (lower-cased); `govtoken-stake` always works',
    defaultText: 'gtc',
    parse: (raw) => {
      if (raw === undefined || raw.trim() === '') return 'gtc';
      const value = raw.trim().toLowerCase();
      if (!/^[a-z0-9]{1,20}$/.test(value)) throw new BadValue(`GOVERNANCE_TOKEN=${JSON.stringify(raw)} must be 1 to 20 letters or digits${forExample('GOVERNANCE_TOKEN', 'gtc')}`);
      return value;
    },
  },

  stakeEventsRateLimitPerMinute: {
    key: 'stakeEventsRateLimitPerMinute',
    name: 'STAKE_EVENTS_RATE_LIMIT_PER_MINUTE',
    description: 'Requests per minute from one client address to the keyless per-round staking events route `/registry/{token}-stake/{address}/{round_id}`',
    defaultText: '600',
    parse: integer('STAKE_EVENTS_RATE_LIMIT_PER_MINUTE', 1, 1_000_000, 600),
  },

  stakingRpcUrl: {
    key: 'stakingRpcUrl',
    name: 'STAKING_RPC_URL',
    description: 'Ethereum JSON-RPC endpoint the staking indexer reads logs from; unset = no indexer (use `stampgate stake import`)',
    defaultText: '(unset)',
    parse: optionalUrl('STAKING_RPC_URL'),
  },

  stakingContractAddress: {
    key: 'stakingContractAddress',
    name: 'STAKING_CONTRACT_ADDRESS',
    description: 'Address of the staking contract whose `selfStake`/`xStake` events are indexed',
    defaultText: '(unset)',
    parse: optionalContractAddress('STAKING_CONTRACT_ADDRESS'),
  },

  stakingStartBlock: {
    key: 'stakingStartBlock',
    name: 'STAKING_START_BLOCK',
    description: 'First block the staking indexer reads (the contract deployment block)',
    defaultText: '0',
    parse: integer('STAKING_START_BLOCK', 0, Number.MAX_SAFE_INTEGER, 0),
  },

  stakingConfirmations: {
    key: 'stakingConfirmations',
    name: 'STAKING_CONFIRMATIONS',
    description: 'Blocks behind the chain head the indexer stays, so that a reorganisation of the newest blocks cannot be counted',
    defaultText: '12',
    parse: integer('STAKING_CONFIRMATIONS', 0, 10_000, 12),
  },

  stakingBlockRange: {
    key: 'stakingBlockRange',
    name: 'STAKING_BLOCK_RANGE',
    description: 'Blocks per `eth_getLogs` request',
    defaultText: '2000',
    parse: integer('STAKING_BLOCK_RANGE', 1, 1_000_000, 2000),
  },

  stakingPollMs: {
    key: 'stakingPollMs',
    name: 'STAKING_POLL_MS',
    description: 'How often a worker looks for new staking blocks',
    defaultText: '15000',
    parse: integer('STAKING_POLL_MS', 100, 3_600_000, 15_000),
  },
};
