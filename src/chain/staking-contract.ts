import { type Address, getAddress, parseAbi, type PublicClient } from 'viem';

/**
 * The staking contract's events, and reading them as `StakeEvent`s with viem.
 * Nothing in the events is indexed: every field is in the log data.
 */
export const stakingEventsAbi = parseAbi([
  'event selfStake(uint256 roundId, address staker, uint256 amount, bool staked)',
  'event xStake(uint256 roundId, address staker, address user, uint256 amount, bool staked)',
  'event roundCreated(uint256 id)',
]);

const stakeEvents = stakingEventsAbi.filter((item) => item.name === 'selfStake' || item.name === 'xStake');

export const UINT256_MAX = 2n ** 256n - 1n;

/** A stake or unstake, from a log or an imported record. Addresses and hash are lower-case. */
export interface StakeEvent {
  type: 'selfStake' | 'xStake';
  roundId: bigint;
  staker: string;
  /** The address staked on (xStake); null for selfStake. */
  user: string | null;
  amount: bigint;
  /** false = an unstake of `amount`. */
  staked: boolean;
  txHash: string;
  logIndex: number;
  blockNumber: number;
}

/** The `selfStake` and `xStake` logs of `contract` in blocks `fromBlock`..`toBlock` (inclusive), in chain order. */
export async function fetchStakeEvents(client: PublicClient, contract: string, fromBlock: number, toBlock: number): Promise<StakeEvent[]> {
  const logs = await client.getLogs({
    address: getAddress(contract) as Address,
    events: stakeEvents,
    fromBlock: BigInt(fromBlock),
    toBlock: BigInt(toBlock),
    strict: true,
  });
  const events: StakeEvent[] = [];
  for (const log of logs) {
    if (log.removed || log.transactionHash === null || log.logIndex === null || log.blockNumber === null) continue;
    const common = {
      txHash: log.transactionHash.toLowerCase(),
      logIndex: log.logIndex,
      blockNumber: Number(log.blockNumber),
    };
    if (log.eventName === 'selfStake') {
      const a = log.args as { roundId: bigint; staker: string; amount: bigint; staked: boolean };
      events.push({ type: 'selfStake', roundId: a.roundId, staker: a.staker.toLowerCase(), user: null, amount: a.amount, staked: a.staked, ...common });
    } else if (log.eventName === 'xStake') {
      const a = log.args as { roundId: bigint; staker: string; user: string; amount: bigint; staked: boolean };
      events.push({
        type: 'xStake',
        roundId: a.roundId,
        staker: a.staker.toLowerCase(),
        user: a.user.toLowerCase(),
        amount: a.amount,
        staked: a.staked,
        ...common,
      });
    }
  }
  return events.sort((x, y) => x.blockNumber - y.blockNumber || x.logIndex - y.logIndex);
}
