import { AppError } from '../errors.js';
import { type StakeEvent, UINT256_MAX } from '../chain/staking-contract.js';
import { type StakeAmountRow, type StakeEventRow, stakeEventRow, type StakeEventsRepository } from './stake-events.repository.js';

/** The staking amounts resource of the interface. Amounts are integer wei strings. */
export interface StakingAmounts {
  users: StakingUser[];
}

export interface StakingUser {
  address: string;
  stakes: { stake: string; round: { id: string } }[];
  xstakeAggregates: { total: string; round: { id: string } }[];
}

/**
 * Net amount per round: stakes minus unstakes, summed exactly with BigInt, in
 * ascending round order. A round whose events cancel out is kept with "0" (the
 * address did stake in it). A negative net can only come from missing events
 * (a start block after the first stakes); it is reported as "0", never as a
 * negative amount.
 */
export function netPerRound(rows: StakeAmountRow[]): { round: string; net: string }[] {
  const sums = new Map<string, bigint>();
  for (const row of rows) {
    const amount = BigInt(row.amount);
    sums.set(row.round_id, (sums.get(row.round_id) ?? 0n) + (row.staked ? amount : -amount));
  }
  return [...sums.entries()]
    .sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0))
    .map(([round, net]) => ({ round, net: (net < 0n ? 0n : net).toString() }));
}

export interface StakeImportProblem {
  /** Position in the file's array. */
  index: number;
  /** The offending field, or "(record)" when the entry is not an object at all. */
  field: string;
  reason: string;
}

export interface StakeImportReport {
  stored: number;
  unchanged: number;
  rejected: number;
  rejections: StakeImportProblem[];
}

const addressPattern = /^0x[0-9a-fA-F]{40}$/;
const hashPattern = /^0x[0-9a-fA-F]{64}$/;
const FIELDS = ['type', 'roundId', 'staker', 'user', 'amount', 'staked', 'txHash', 'logIndex', 'blockNumber'];

/** A uint256 given as a decimal string, or as a JSON number only when it is exact (a safe integer). */
function uint256(value: unknown): bigint | string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) return 'must be a non-negative whole number (write numbers above 2^53 as decimal strings)';
    return BigInt(value);
  }
  if (typeof value === 'string' && /^[0-9]{1,78}$/.test(value)) {
    const n = BigInt(value);
    return n <= UINT256_MAX ? n : 'is larger than a uint256';
  }
  return 'must be a non-negative whole number, as a decimal string';
}

function blockInteger(value: unknown): number | string {
  const n = typeof value === 'string' && /^[0-9]{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) return n;
  return 'must be a non-negative whole number';
}

/** Checks one record of an import file; returns the event, or every problem found in it. */
export function parseStakeRecord(value: unknown): { event: StakeEvent } | { problems: { field: string; reason: string }[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problems: [{ field: '(record)', reason: 'is not a JSON object' }] };
  }
  const r = value as Record<string, unknown>;
  const problems: { field: string; reason: string }[] = [];
  const bad = (field: string, reason: string) => problems.push({ field, reason });

  if (r.type !== 'selfStake' && r.type !== 'xStake') bad('type', 'must be "selfStake" or "xStake"');
  const roundId = uint256(r.roundId);
  if (typeof roundId === 'string') bad('roundId', roundId);
  if (typeof r.staker !== 'string' || !addressPattern.test(r.staker)) bad('staker', 'must be 0x followed by 40 hexadecimal digits');
  if (r.type === 'xStake') {
    if (typeof r.user !== 'string' || !addressPattern.test(r.user)) bad('user', 'must be 0x followed by 40 hexadecimal digits for an xStake');
  } else if (r.type === 'selfStake' && r.user !== undefined && r.user !== null) {
    bad('user', 'is only allowed on xStake events');
  }
  const amount = uint256(r.amount);
  if (typeof amount === 'string') bad('amount', amount.replace('number', 'number of wei'));
  if (typeof r.staked !== 'boolean') bad('staked', 'must be true (stake) or false (unstake)');
  if (typeof r.txHash !== 'string' || !hashPattern.test(r.txHash)) bad('txHash', 'must be 0x followed by 64 hexadecimal digits');
  const logIndex = blockInteger(r.logIndex);
  if (typeof logIndex === 'string') bad('logIndex', logIndex);
  const blockNumber = blockInteger(r.blockNumber);
  if (typeof blockNumber === 'string') bad('blockNumber', blockNumber);
  for (const field of Object.keys(r)) if (!FIELDS.includes(field)) bad(field, 'is not a field of a staking event');

  if (problems.length > 0) return { problems };
  return {
    event: {
      type: r.type as StakeEvent['type'],
      roundId: roundId as bigint,
      staker: (r.staker as string).toLowerCase(),
      user: r.type === 'xStake' ? (r.user as string).toLowerCase() : null,
      amount: amount as bigint,
      staked: r.staked as boolean,
      txHash: (r.txHash as string).toLowerCase(),
      logIndex: logIndex as number,
      blockNumber: blockNumber as number,
    },
  };
}

function sameEvent(event: StakeEvent, row: StakeEventRow): boolean {
  return (
    row.type === event.type &&
    row.round_id === event.roundId.toString() &&
    row.staker === event.staker &&
    row.user_address === event.user &&
    row.amount === event.amount.toString() &&
    !!row.staked === event.staked &&
    Number(row.block_number) === event.blockNumber
  );
}

export function stakeService(repo: StakeEventsRepository, clock: () => number = Date.now) {
  return {
    /** The staking amounts of one (lower-case) address; `{"users":[]}` when it has no staking events. */
    async amountsFor(address: string): Promise<StakingAmounts> {
      const [self, community] = await Promise.all([repo.selfStakesOf(address), repo.communityStakesOn(address)]);
      if (self.length === 0 && community.length === 0) return { users: [] };
      return {
        users: [
          {
            address,
            stakes: netPerRound(self).map(({ round, net }) => ({ stake: net, round: { id: round } })),
            xstakeAggregates: netPerRound(community).map(({ round, net }) => ({ total: net, round: { id: round } })),
          },
        ],
      };
    },

    /**
     * Imports a JSON array of staking events (the log fields). Bad records are
     * reported by index and field and the good ones kept. The key is txHash +
     * logIndex: a record already stored (from the chain or an earlier import) is
     * left alone, so a re-import never counts twice; one that reuses a stored key
     * with different values is rejected.
     */
    async importEvents(document: unknown): Promise<StakeImportReport> {
      if (!Array.isArray(document)) throw new AppError('invalid_request', 'The file must hold a JSON array of staking events.');
      const report: StakeImportReport = { stored: 0, unchanged: 0, rejected: 0, rejections: [] };
      const good: { index: number; event: StakeEvent }[] = [];
      const firstOf = new Map<string, StakeEvent>();
      document.forEach((value, index) => {
        const parsed = parseStakeRecord(value);
        if ('problems' in parsed) {
          report.rejected += 1;
          for (const p of parsed.problems) report.rejections.push({ index, ...p });
          return;
        }
        good.push({ index, event: parsed.event });
      });
      const { inserted, existing } = await repo.storeImported(good.map((g) => g.event), clock());
      for (const { index, event } of good) {
        const key = repo.keyOf(event.txHash, event.logIndex);
        let reference: StakeEventRow | undefined;
        if (inserted.has(key)) {
          // Inserted from its first occurrence in this file; a later one must repeat it.
          const first = firstOf.get(key);
          if (!first) {
            firstOf.set(key, event);
            report.stored += 1;
            continue;
          }
          reference = stakeEventRow(first, 'import', 0);
        } else {
          reference = existing.get(key);
        }
        if (reference && sameEvent(event, reference)) {
          report.unchanged += 1;
        } else {
          report.rejected += 1;
          report.rejections.push({ index, field: 'txHash', reason: 'an event with this txHash and logIndex is already stored with different values' });
        }
      }
      report.rejections.sort((a, b) => a.index - b.index);
      return report;
    },
  };
}

export type StakeService = ReturnType<typeof stakeService>;
