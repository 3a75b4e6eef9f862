/**
 * Tables of staking events and the indexer's progress.
 *
 * uint256 values (round ids, wei amounts) are decimal text: SQLite has no exact
 * integer wider than 64 bits, so both databases store the digits and every sum
 * is done with BigInt in TypeScript (see stake-amounts.ts).
 */

import type { Generated } from 'kysely';

export type StakeEventType = 'selfStake' | 'xStake';

/** One `selfStake` or `xStake` log (or imported record); the key is (tx_hash, log_index). */
export interface StakeEventsTable {
  /** Numbered in arrival order by the database (see migration 0009). */
  id: Generated<number>;
  /** 0x + 64 lower-case hex digits. */
  tx_hash: string;
  log_index: number;
  block_number: number;
  type: StakeEventType;
  /** uint256 as decimal text. */
  round_id: string;
  /** Lower-case address that staked. */
  staker: string;
  /** Lower-case address staked on (xStake only; null for selfStake). */
  user_address: string | null;
  /** uint256 wei as decimal text. */
  amount: string;
  /** 1 = stake, 0 = unstake of `amount`. */
  staked: number;
  /** Where the event came from: the chain indexer or `stampgate stake import`. */
  source: 'chain' | 'import';
  created_at: number;
  /**
   * Lower-case address of the staking contract that emitted it (migration 0017): the indexed
   * contract for chain events, STAKING_CONTRACT_ADDRESS at import time for imported ones; null
   * when unknown (stored before 0017, or imported with no contract configured).
   */
  contract_address: string | null;
}

/** The indexer's progress per staking contract: every block up to `last_block` is stored. */
export interface StakingCursorsTable {
  contract_address: string;
  last_block: number;
  updated_at: number;
}

export interface StakingTables {
  stake_events: StakeEventsTable;
  staking_cursors: StakingCursorsTable;
}
