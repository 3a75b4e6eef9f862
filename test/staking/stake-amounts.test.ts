/** Stake amounts without a chain: the per-round netting and the reading of an imported stake record. */
import { describe, expect, it } from 'vitest';
import { netPerRound, parseStakeRecord } from '../../src/staking/stake-amounts.service.js';

describe('netPerRound', () => {
  it('sums stakes minus unstakes exactly, per round in numeric round order, and never goes negative', () => {
    const rows = [
      { round_id: '10', amount: '5', staked: 1 },
      { round_id: '2', amount: (2n ** 255n).toString(), staked: 1 },
      { round_id: '2', amount: '1', staked: 1 },
      { round_id: '2', amount: '1', staked: 0 },
      { round_id: '3', amount: '4', staked: 1 },
      { round_id: '3', amount: '4', staked: 0 },
      { round_id: '10', amount: '9', staked: 0 },
    ];
    expect(netPerRound(rows)).toEqual([
      { round: '2', net: (2n ** 255n).toString() },
      { round: '3', net: '0' },
      { round: '10', net: '0' },
    ]);
    expect(netPerRound([])).toEqual([]);
  });
});

describe('parseStakeRecord', () => {
  const good = {
    type: 'xStake',
    roundId: '1',
    staker: '0x' + 'AB'.repeat(20),
    user: '0x' + 'cd'.repeat(20),
    amount: (2n ** 200n).toString(),
    staked: true,
    txHash: '0x' + 'EF'.repeat(32),
    logIndex: 3,
    blockNumber: '17',
  };

  it('accepts a well-formed record and lower-cases addresses and hash', () => {
    expect(parseStakeRecord(good)).toEqual({
      event: {
        type: 'xStake',
        roundId: 1n,
        staker: '0x' + 'ab'.repeat(20),
        user: '0x' + 'cd'.repeat(20),
        amount: 2n ** 200n,
        staked: true,
        txHash: '0x' + 'ef'.repeat(32),
        logIndex: 3,
        blockNumber: 17,
      },
    });
  });

  it.each([
    [{ type: 'stake' }, 'type'],
    [{ roundId: -1 }, 'roundId'],
    [{ roundId: '1.5' }, 'roundId'],
    [{ staker: '0x1234' }, 'staker'],
    [{ user: undefined }, 'user'],
    [{ type: 'selfStake' }, 'user'],
    [{ amount: 2 ** 60 }, 'amount'],
    [{ amount: (2n ** 256n).toString() }, 'amount'],
    [{ amount: '1e18' }, 'amount'],
    [{ staked: 'true' }, 'staked'],
    [{ txHash: '0x12' }, 'txHash'],
    [{ logIndex: 1.5 }, 'logIndex'],
    [{ blockNumber: null }, 'blockNumber'],
    [{ extra: 1 }, 'extra'],
  ])('refuses %o in field %s', (change, field) => {
    const result = parseStakeRecord({ ...good, ...change });
    expect(result).toEqual({ problems: [{ field, reason: expect.any(String) }] });
  });

  it('reports every problem of a record, and a non-object as (record)', () => {
    const result = parseStakeRecord({ ...good, staker: 'x', amount: 'lots' });
    expect(result).toEqual({ problems: [expect.objectContaining({ field: 'staker' }), expect.objectContaining({ field: 'amount' })] });
    expect(parseStakeRecord([1])).toEqual({ problems: [{ field: '(record)', reason: 'is not a JSON object' }] });
  });
});
