/**
 * The staking indexer against IdentityStaking on a local anvil chain, and the import of stake
 * records, on each database (chain and database set-up in staking-chain.ts; amounts without a
 * chain in stake-amounts.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import type { IndexRun } from '../../src/staking/staking-indexer.js';
import { databaseKinds } from '../helpers/databases.js';
import { type Anvil, type Artifact, compileContracts, freePort, startAnvil, type TestWallet } from '../helpers/evm.js';
import { StakingChain } from './staking-chain.js';

const BIG = 2n ** 60n + 7n; // far above 2^53: any float on the way would lose it
const E18 = 10n ** 18n;

let anvil: Anvil;
let staking: Artifact;

beforeAll(async () => {
  staking = compileContracts('IdentityStaking.sol').IdentityStaking!;
  anvil = await startAnvil();
}, 60_000);
afterAll(async () => anvil?.stop());

describe.each(databaseKinds)('staking indexer and amounts on %s (anvil)', (kind) => {
  const chain = new StakingChain(kind, () => anvil, () => staking);
  const { addr, createRound, stake, unstake, stakeOn, unstakeOn, services, reopen, amounts } = chain;

  it('indexes self stakes, unstakes and community stakes over several rounds and users, exactly, in block ranges', async () => {
    await createRound(); // round 1
    await createRound(); // round 2
    await stake(chain.alice, 1, BIG);
    await stake(chain.alice, 1, 3n * E18);
    await unstake(chain.alice, 1, E18);
    await stake(chain.alice, 2, 5n);
    await stakeOn(chain.bob, 1, [chain.alice, chain.carol], [BIG, 7n * E18]);
    await stakeOn(chain.dave, 1, [chain.alice], [BIG]);
    await unstakeOn(chain.bob, 1, [chain.alice], [1n]);
    await stakeOn(chain.bob, 2, [chain.carol], [11n]);
    await stake(chain.bob, 2, 1n);
    await unstake(chain.bob, 2, 1n);
    const head = await anvil.blockNumber();

    const s = services();
    const run = await s.indexer!.runOnce();
    const blocks = Number(head - chain.deployBlock) + 1;
    expect(run).toEqual({
      contract: chain.contract.toLowerCase(),
      head: Number(head),
      safeBlock: Number(head),
      confirmations: 0,
      fromBlock: Number(chain.deployBlock),
      toBlock: Number(head),
      requests: Math.ceil(blocks / 3),
      logs: 11,
      stored: 11,
      unchanged: 0,
      lastBlock: Number(head),
    } satisfies IndexRun);

    expect(await amounts(s, chain.alice)).toEqual({
      users: [
        {
          address: addr(chain.alice),
          stakes: [
            { stake: (BIG + 2n * E18).toString(), round: { id: '1' } },
            { stake: '5', round: { id: '2' } },
          ],
          xstakeAggregates: [{ total: (2n * BIG - 1n).toString(), round: { id: '1' } }],
        },
      ],
    });
    expect(await amounts(s, chain.carol)).toEqual({
      users: [
        {
          address: addr(chain.carol),
          stakes: [],
          xstakeAggregates: [
            { total: (7n * E18).toString(), round: { id: '1' } },
            { total: '11', round: { id: '2' } },
          ],
        },
      ],
    });
    // Bob staked on others (not on him) and fully unstaked his own round-2 stake.
    expect(await amounts(s, chain.bob)).toEqual({
      users: [{ address: addr(chain.bob), stakes: [{ stake: '0', round: { id: '2' } }], xstakeAggregates: [] }],
    });
    // Dave only staked on alice: no stakes of his own and none on him.
    expect(await amounts(s, chain.dave)).toEqual({ users: [] });
  });

  it('continues from its stored block after a restart, and a re-read of the same range counts nothing twice', async () => {
    await createRound();
    await stake(chain.alice, 1, BIG);
    await stakeOn(chain.bob, 1, [chain.alice], [BIG]);
    const first = await services().indexer!.runOnce();
    expect(first.stored).toBe(2);

    await stake(chain.alice, 1, BIG);
    await unstakeOn(chain.bob, 1, [chain.alice], [2n]);
    const head = await anvil.blockNumber();

    // A new process: new services on a new connection to the same database.
    const restarted = services({}, reopen());
    const second = await restarted.indexer!.runOnce();
    expect(second).toMatchObject({ fromBlock: first.lastBlock! + 1, toBlock: Number(head), logs: 2, stored: 2, unchanged: 0 });
    const expected = {
      users: [
        {
          address: addr(chain.alice),
          stakes: [{ stake: (2n * BIG).toString(), round: { id: '1' } }],
          xstakeAggregates: [{ total: (BIG - 2n).toString(), round: { id: '1' } }],
        },
      ],
    };
    expect(await amounts(restarted, chain.alice)).toEqual(expected);

    // Nothing new: nothing read.
    const idle = await restarted.indexer!.runOnce();
    expect(idle).toMatchObject({ fromBlock: null, toBlock: null, requests: 0, lastBlock: Number(head) });

    // Reading everything again from the deployment block changes nothing and keeps the cursor.
    const again = await restarted.indexer!.runOnce({ fromBlock: Number(chain.deployBlock) });
    expect(again).toMatchObject({ fromBlock: Number(chain.deployBlock), toBlock: Number(head), logs: 4, stored: 0, unchanged: 4, lastBlock: Number(head) });
    expect(await amounts(restarted, chain.alice)).toEqual(expected);
    expect(await restarted.indexer!.runOnce()).toMatchObject({ fromBlock: null, lastBlock: Number(head) });
    const rows = await chain.database.db.selectFrom('stake_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(4);
  });

  it('does not count blocks within the confirmation depth until enough blocks follow them', async () => {
    const s = services({ STAKING_CONFIRMATIONS: '3' });
    await createRound();
    await stake(chain.alice, 1, BIG);
    await anvil.mine(3); // the stake now has 3 blocks after it
    const early = await s.indexer!.runOnce();
    expect(early.logs).toBe(1);

    const stakeBlock = await stake(chain.alice, 1, 10n); // the newest block: within the depth
    await stakeOn(chain.bob, 1, [chain.alice], [20n]);
    const run = await s.indexer!.runOnce();
    const head = await anvil.blockNumber();
    expect(run).toMatchObject({ head: Number(head), safeBlock: Number(head) - 3, toBlock: Number(head) - 3, logs: 0 });
    expect(Number(stakeBlock)).toBeGreaterThan(run.safeBlock);
    expect(await amounts(s, chain.alice)).toEqual({
      users: [{ address: addr(chain.alice), stakes: [{ stake: BIG.toString(), round: { id: '1' } }], xstakeAggregates: [] }],
    });

    await anvil.mine(2); // the xStake is still one block short
    expect(await s.indexer!.runOnce()).toMatchObject({ logs: 1, stored: 1 });
    expect((await amounts(s, chain.alice)).users[0]!.xstakeAggregates).toEqual([]);
    await anvil.mine(1);
    expect(await s.indexer!.runOnce()).toMatchObject({ logs: 1, stored: 1 });
    expect(await amounts(s, chain.alice)).toEqual({
      users: [
        {
          address: addr(chain.alice),
          stakes: [{ stake: (BIG + 10n).toString(), round: { id: '1' } }],
          xstakeAggregates: [{ total: '20', round: { id: '1' } }],
        },
      ],
    });
  });

  it('never counts a log twice when the same events are also imported from a file', async () => {
    await createRound();
    await stake(chain.alice, 1, BIG);
    await stakeOn(chain.bob, 1, [chain.alice], [5n]);
    const logs = await anvil.publicClient.getContractEvents({ address: chain.contract, abi: staking.abi, fromBlock: chain.deployBlock });
    const records = logs
      .filter((l) => l.eventName === 'selfStake' || l.eventName === 'xStake')
      .map((l) => {
        const a = l.args as Record<string, unknown>;
        return {
          type: l.eventName,
          roundId: String(a.roundId),
          staker: a.staker,
          ...(l.eventName === 'xStake' ? { user: a.user } : {}),
          amount: String(a.amount),
          staked: a.staked,
          txHash: l.transactionHash,
          logIndex: l.logIndex,
          blockNumber: Number(l.blockNumber),
        };
      });
    expect(records).toHaveLength(2);

    const s = services();
    expect(await s.stakes.importEvents(records)).toEqual({ stored: 2, unchanged: 0, rejected: 0, rejections: [] });
    expect(await s.indexer!.runOnce()).toMatchObject({ logs: 2, stored: 0, unchanged: 2 });
    expect(await s.stakes.importEvents(records)).toEqual({ stored: 0, unchanged: 2, rejected: 0, rejections: [] });
    expect(await amounts(s, chain.alice)).toEqual({
      users: [
        {
          address: addr(chain.alice),
          stakes: [{ stake: BIG.toString(), round: { id: '1' } }],
          xstakeAggregates: [{ total: '5', round: { id: '1' } }],
        },
      ],
    });
  });

  it("counts only the configured contract's events: another contract's never, imports as the configured one's", async () => {
    // A second staking contract on the same chain, indexed into the same database by another configuration.
    const { address: other } = await anvil.deploy(chain.owner, staking);
    const onOther = (w: TestWallet, fn: string, args: readonly unknown[]) => anvil.write(w, other, staking.abi, fn, args);
    await createRound();
    await onOther(chain.owner, 'createRound', []);
    await stake(chain.alice, 1, 5n);
    await stakeOn(chain.bob, 1, [chain.alice], [7n]);
    await onOther(chain.alice, 'stake', [1n, 1000n]);
    await onOther(chain.bob, 'stakeUsers', [1n, [chain.alice.account.address], [3000n]]);

    const mine = services();
    const theirs = services({ STAKING_CONTRACT_ADDRESS: other });
    expect(await mine.indexer!.runOnce()).toMatchObject({ stored: 2 });
    expect(await theirs.indexer!.runOnce()).toMatchObject({ stored: 2 });
    const stored = await chain.database.db.selectFrom('stake_events').select(['contract_address']).execute();
    expect(stored.map((r) => r.contract_address).sort()).toEqual([chain.contract, chain.contract, other, other].map((a) => a.toLowerCase()).sort());

    const only = (self: string, community: string) => ({
      users: [{ address: addr(chain.alice), stakes: [{ stake: self, round: { id: '1' } }], xstakeAggregates: [{ total: community, round: { id: '1' } }] }],
    });
    expect(await amounts(mine, chain.alice)).toEqual(only('5', '7'));
    expect(await amounts(theirs, chain.alice)).toEqual(only('1000', '3000'));
    expect((await mine.events.eventsOfRound(addr(chain.alice), '1')).map((e) => e.amount).sort()).toEqual(['5', '7']);

    // An import is recorded as the configured contract's, so the other configuration does not count it.
    const imported = { type: 'selfStake', roundId: '1', staker: addr(chain.alice), amount: '11', staked: true, txHash: '0x' + 'ab'.repeat(32), logIndex: 0, blockNumber: 1 };
    expect(await mine.stakes.importEvents([imported])).toMatchObject({ stored: 1 });
    expect(await amounts(mine, chain.alice)).toEqual(only('16', '7'));
    expect(await amounts(theirs, chain.alice)).toEqual(only('1000', '3000'));
    // With no contract configured, every stored event counts.
    expect(await amounts(services({ STAKING_CONTRACT_ADDRESS: '' }), chain.alice)).toEqual(only('1016', '3007'));
  });

  it('runs in a start/stop loop that picks up new blocks, and reports failures without stopping', async () => {
    const s = services();
    const indexer = s.indexer!;
    const runs: IndexRun[] = [];
    indexer.on('indexed', (run: IndexRun) => runs.push(run));
    indexer.start();
    try {
      await createRound();
      await stake(chain.carol, 1, BIG);
      await expect.poll(() => amounts(s, chain.carol), { timeout: 5000, interval: 50 }).toEqual({
        users: [{ address: addr(chain.carol), stakes: [{ stake: BIG.toString(), round: { id: '1' } }], xstakeAggregates: [] }],
      });
      expect(runs.length).toBeGreaterThan(0);
    } finally {
      await indexer.stop();
    }
    // Stopped: a new stake is not picked up.
    await stake(chain.carol, 1, 1n);
    await new Promise((r) => setTimeout(r, 300));
    expect((await amounts(s, chain.carol)).users[0]!.stakes).toEqual([{ stake: BIG.toString(), round: { id: '1' } }]);

    const down = services({ STAKING_RPC_URL: `http://127.0.0.1:${await freePort()}` });
    const failures: unknown[] = [];
    down.indexer!.on('failure', (error) => failures.push(error));
    down.indexer!.start();
    await expect.poll(() => failures.length, { timeout: 5000, interval: 50 }).toBeGreaterThanOrEqual(2);
    await down.indexer!.stop();
    expect(failures[0]).toBeInstanceOf(AppError);
    expect((failures[0] as AppError).code).toBe('upstream_unavailable');
  });

  it('gives a clear upstream_unavailable error for an unreachable endpoint, naming only its host', async () => {
    const port = await freePort();
    const s = services({ STAKING_RPC_URL: `http://127.0.0.1:${port}/v3/secret-api-key` });
    const error = await s.indexer!.runOnce().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('upstream_unavailable');
    expect((error as AppError).message).toBe(
      `Could not read the chain head from the staking RPC endpoint http://127.0.0.1:${port}: the endpoint could not be reached.`,
    );
    expect(await chain.database.db.selectFrom('staking_cursors').selectAll().execute()).toEqual([]);
  });

  it('has no indexer unless both the RPC URL and the contract are configured', () => {
    expect(services({ STAKING_RPC_URL: '' }).indexer).toBeNull();
    expect(services({ STAKING_CONTRACT_ADDRESS: '' }).indexer).toBeNull();
  });

  describe('import', () => {
    const hash = (n: number) => '0x' + n.toString(16).padStart(64, '0');
    const A = '0x' + 'a1'.repeat(20);
    const B = '0x' + 'b2'.repeat(20);
    const record = (n: number, extra: Record<string, unknown> = {}) => ({
      type: 'selfStake',
      roundId: '1',
      staker: A,
      amount: BIG.toString(),
      staked: true,
      txHash: hash(n),
      logIndex: 0,
      blockNumber: n,
      ...extra,
    });

    it('keeps the good records, reports the bad ones by index and field, and never double counts on re-import', async () => {
      const s = services();
      const file = [
        record(1),
        record(2, { amount: '-3' }),
        record(3, { type: 'xStake', staker: B, user: A.toUpperCase().replace('0X', '0x'), amount: '9' }),
        'not an event',
        record(4, { staked: false, amount: '1' }),
        record(1), // the same key again in one file: a repeat, not a second count
        record(5, { roundId: 2 }),
      ];
      expect(await s.stakes.importEvents(file)).toEqual({
        stored: 4,
        unchanged: 1,
        rejected: 2,
        rejections: [
          { index: 1, field: 'amount', reason: expect.stringContaining('whole number') },
          { index: 3, field: '(record)', reason: 'is not a JSON object' },
        ],
      });
      const expected = {
        users: [
          {
            address: A,
            stakes: [
              { stake: (BIG - 1n).toString(), round: { id: '1' } },
              { stake: BIG.toString(), round: { id: '2' } },
            ],
            xstakeAggregates: [{ total: '9', round: { id: '1' } }],
          },
        ],
      };
      expect(await s.stakes.amountsFor(A)).toEqual(expected);

      expect(await s.stakes.importEvents([record(1), record(4, { staked: false, amount: '1' })])).toEqual({
        stored: 0,
        unchanged: 2,
        rejected: 0,
        rejections: [],
      });
      expect(await s.stakes.amountsFor(A)).toEqual(expected);
    });

    it('refuses a record that reuses a stored key with different values, and a document that is not an array', async () => {
      const s = services();
      await s.stakes.importEvents([record(1)]);
      expect(await s.stakes.importEvents([record(1, { amount: '2' }), record(6)])).toEqual({
        stored: 1,
        unchanged: 0,
        rejected: 1,
        rejections: [{ index: 0, field: 'txHash', reason: expect.stringContaining('different values') }],
      });
      expect((await s.stakes.amountsFor(A)).users[0]!.stakes).toEqual([{ stake: (2n * BIG).toString(), round: { id: '1' } }]);
      await expect(s.stakes.importEvents({ events: [] })).rejects.toMatchObject({ code: 'invalid_request' });
    });
  });
});
