import type { Address } from 'viem';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { AppError } from '../../src/errors.js';
import { netPerRound, parseStakeRecord } from '../../src/staking/stake-amounts.service.js';
import { createStakingServices, type StakingServices } from '../../src/staking/staking-services.js';
import type { IndexRun } from '../../src/staking/staking-indexer.js';
import { databaseKinds, openMigratedTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { type Anvil, type Artifact, compileContracts, freePort, startAnvil, type TestWallet } from '../helpers/evm.js';

const BIG = 2n ** 60n + 7n; // far above 2^53: any float on the way would lose it
const E18 = 10n ** 18n;

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

let anvil: Anvil;
let staking: Artifact;

beforeAll(async () => {
  staking = compileContracts('IdentityStaking.sol').IdentityStaking!;
  anvil = await startAnvil();
}, 60_000);
afterAll(async () => anvil?.stop());

describe.each(databaseKinds)('staking indexer and amounts on %s (anvil)', (kind) => {
  let test: TestDatabase;
  let database: Database;
  let extraDatabases: Database[];
  let contract: Address;
  let deployBlock: bigint;
  let owner: TestWallet;
  let alice: TestWallet;
  let bob: TestWallet;
  let carol: TestWallet;
  let dave: TestWallet;

  const addr = (w: TestWallet) => w.account.address.toLowerCase();
  const call = (w: TestWallet, fn: string, args: readonly unknown[]) => anvil.write(w, contract, staking.abi, fn, args);
  const createRound = () => call(owner, 'createRound', []);
  const stake = (w: TestWallet, round: number, amount: bigint) => call(w, 'stake', [BigInt(round), amount]);
  const unstake = (w: TestWallet, round: number, amount: bigint) => call(w, 'unstake', [BigInt(round), amount]);
  const stakeOn = (w: TestWallet, round: number, users: TestWallet[], amounts: bigint[]) =>
    call(w, 'stakeUsers', [BigInt(round), users.map((u) => u.account.address), amounts]);
  const unstakeOn = (w: TestWallet, round: number, users: TestWallet[], amounts: bigint[]) =>
    call(w, 'unstakeUsers', [BigInt(round), users.map((u) => u.account.address), amounts]);

  function services(env: Record<string, string> = {}, db: Database = database): StakingServices {
    const config = loadConfig({
      DATABASE_URL: test.url,
      STAKING_RPC_URL: anvil.url,
      STAKING_CONTRACT_ADDRESS: contract,
      STAKING_START_BLOCK: deployBlock.toString(),
      STAKING_CONFIRMATIONS: '0',
      STAKING_BLOCK_RANGE: '3',
      STAKING_POLL_MS: '100',
      ...env,
    });
    return createStakingServices(config, db);
  }

  /** A second connection to the same database: what a restarted process would open. */
  function reopen(): Database {
    const db = test.open();
    extraDatabases.push(db);
    return db;
  }

  const amounts = (s: StakingServices, w: TestWallet) => s.stakes.amountsFor(addr(w));

  // One database per kind (creating and migrating one costs about a second on PostgreSQL); emptied before each test.
  beforeAll(async () => {
    ({ test, database } = await openMigratedTestDatabase(kind));
  });
  afterAll(async () => {
    await database.close();
    await test.drop();
  });
  beforeEach(async () => {
    await database.db.deleteFrom('stake_events').execute();
    await database.db.deleteFrom('staking_cursors').execute();
    extraDatabases = [];
    [owner, alice, bob, carol, dave] = anvil.wallets as [TestWallet, TestWallet, TestWallet, TestWallet, TestWallet];
    ({ address: contract, blockNumber: deployBlock } = await anvil.deploy(owner, staking));
  });
  afterEach(async () => {
    for (const db of extraDatabases) await db.close();
  });

  it('indexes self stakes, unstakes and community stakes over several rounds and users, exactly, in block ranges', async () => {
    await createRound(); // round 1
    await createRound(); // round 2
    await stake(alice, 1, BIG);
    await stake(alice, 1, 3n * E18);
    await unstake(alice, 1, E18);
    await stake(alice, 2, 5n);
    await stakeOn(bob, 1, [alice, carol], [BIG, 7n * E18]);
    await stakeOn(dave, 1, [alice], [BIG]);
    await unstakeOn(bob, 1, [alice], [1n]);
    await stakeOn(bob, 2, [carol], [11n]);
    await stake(bob, 2, 1n);
    await unstake(bob, 2, 1n);
    const head = await anvil.blockNumber();

    const s = services();
    const run = await s.indexer!.runOnce();
    const blocks = Number(head - deployBlock) + 1;
    expect(run).toEqual({
      contract: contract.toLowerCase(),
      head: Number(head),
      safeBlock: Number(head),
      confirmations: 0,
      fromBlock: Number(deployBlock),
      toBlock: Number(head),
      requests: Math.ceil(blocks / 3),
      logs: 11,
      stored: 11,
      unchanged: 0,
      lastBlock: Number(head),
    } satisfies IndexRun);

    expect(await amounts(s, alice)).toEqual({
      users: [
        {
          address: addr(alice),
          stakes: [
            { stake: (BIG + 2n * E18).toString(), round: { id: '1' } },
            { stake: '5', round: { id: '2' } },
          ],
          xstakeAggregates: [{ total: (2n * BIG - 1n).toString(), round: { id: '1' } }],
        },
      ],
    });
    expect(await amounts(s, carol)).toEqual({
      users: [
        {
          address: addr(carol),
          stakes: [],
          xstakeAggregates: [
            { total: (7n * E18).toString(), round: { id: '1' } },
            { total: '11', round: { id: '2' } },
          ],
        },
      ],
    });
    // Bob staked on others (not on him) and fully unstaked his own round-2 stake.
    expect(await amounts(s, bob)).toEqual({
      users: [{ address: addr(bob), stakes: [{ stake: '0', round: { id: '2' } }], xstakeAggregates: [] }],
    });
    // Dave only staked on alice: no stakes of his own and none on him.
    expect(await amounts(s, dave)).toEqual({ users: [] });
  });

  it('continues from its stored block after a restart, and a re-read of the same range counts nothing twice', async () => {
    await createRound();
    await stake(alice, 1, BIG);
    await stakeOn(bob, 1, [alice], [BIG]);
    const first = await services().indexer!.runOnce();
    expect(first.stored).toBe(2);

    await stake(alice, 1, BIG);
    await unstakeOn(bob, 1, [alice], [2n]);
    const head = await anvil.blockNumber();

    // A new process: new services on a new connection to the same database.
    const restarted = services({}, reopen());
    const second = await restarted.indexer!.runOnce();
    expect(second).toMatchObject({ fromBlock: first.lastBlock! + 1, toBlock: Number(head), logs: 2, stored: 2, unchanged: 0 });
    const expected = {
      users: [
        {
          address: addr(alice),
          stakes: [{ stake: (2n * BIG).toString(), round: { id: '1' } }],
          xstakeAggregates: [{ total: (BIG - 2n).toString(), round: { id: '1' } }],
        },
      ],
    };
    expect(await amounts(restarted, alice)).toEqual(expected);

    // Nothing new: nothing read.
    const idle = await restarted.indexer!.runOnce();
    expect(idle).toMatchObject({ fromBlock: null, toBlock: null, requests: 0, lastBlock: Number(head) });

    // Reading everything again from the deployment block changes nothing and keeps the cursor.
    const again = await restarted.indexer!.runOnce({ fromBlock: Number(deployBlock) });
    expect(again).toMatchObject({ fromBlock: Number(deployBlock), toBlock: Number(head), logs: 4, stored: 0, unchanged: 4, lastBlock: Number(head) });
    expect(await amounts(restarted, alice)).toEqual(expected);
    expect(await restarted.indexer!.runOnce()).toMatchObject({ fromBlock: null, lastBlock: Number(head) });
    const rows = await database.db.selectFrom('stake_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(4);
  });

  it('does not count blocks within the confirmation depth until enough blocks follow them', async () => {
    const s = services({ STAKING_CONFIRMATIONS: '3' });
    await createRound();
    await stake(alice, 1, BIG);
    await anvil.mine(3); // the stake now has 3 blocks after it
    const early = await s.indexer!.runOnce();
    expect(early.logs).toBe(1);

    const stakeBlock = await stake(alice, 1, 10n); // the newest block: within the depth
    await stakeOn(bob, 1, [alice], [20n]);
    const run = await s.indexer!.runOnce();
    const head = await anvil.blockNumber();
    expect(run).toMatchObject({ head: Number(head), safeBlock: Number(head) - 3, toBlock: Number(head) - 3, logs: 0 });
    expect(Number(stakeBlock)).toBeGreaterThan(run.safeBlock);
    expect(await amounts(s, alice)).toEqual({
      users: [{ address: addr(alice), stakes: [{ stake: BIG.toString(), round: { id: '1' } }], xstakeAggregates: [] }],
    });

    await anvil.mine(2); // the xStake is still one block short
    expect(await s.indexer!.runOnce()).toMatchObject({ logs: 1, stored: 1 });
    expect((await amounts(s, alice)).users[0]!.xstakeAggregates).toEqual([]);
    await anvil.mine(1);
    expect(await s.indexer!.runOnce()).toMatchObject({ logs: 1, stored: 1 });
    expect(await amounts(s, alice)).toEqual({
      users: [
        {
          address: addr(alice),
          stakes: [{ stake: (BIG + 10n).toString(), round: { id: '1' } }],
          xstakeAggregates: [{ total: '20', round: { id: '1' } }],
        },
      ],
    });
  });

  it('never counts a log twice when the same events are also imported from a file', async () => {
    await createRound();
    await stake(alice, 1, BIG);
    await stakeOn(bob, 1, [alice], [5n]);
    const logs = await anvil.publicClient.getContractEvents({ address: contract, abi: staking.abi, fromBlock: deployBlock });
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
    expect(await amounts(s, alice)).toEqual({
      users: [
        {
          address: addr(alice),
          stakes: [{ stake: BIG.toString(), round: { id: '1' } }],
          xstakeAggregates: [{ total: '5', round: { id: '1' } }],
        },
      ],
    });
  });

  it("counts only the configured contract's events: another contract's never, imports as the configured one's", async () => {
    // A second staking contract on the same chain, indexed into the same database by another configuration.
    const { address: other } = await anvil.deploy(owner, staking);
    const onOther = (w: TestWallet, fn: string, args: readonly unknown[]) => anvil.write(w, other, staking.abi, fn, args);
    await createRound();
    await onOther(owner, 'createRound', []);
    await stake(alice, 1, 5n);
    await stakeOn(bob, 1, [alice], [7n]);
    await onOther(alice, 'stake', [1n, 1000n]);
    await onOther(bob, 'stakeUsers', [1n, [alice.account.address], [3000n]]);

    const mine = services();
    const theirs = services({ STAKING_CONTRACT_ADDRESS: other });
    expect(await mine.indexer!.runOnce()).toMatchObject({ stored: 2 });
    expect(await theirs.indexer!.runOnce()).toMatchObject({ stored: 2 });
    const stored = await database.db.selectFrom('stake_events').select(['contract_address']).execute();
    expect(stored.map((r) => r.contract_address).sort()).toEqual([contract, contract, other, other].map((a) => a.toLowerCase()).sort());

    const only = (self: string, community: string) => ({
      users: [{ address: addr(alice), stakes: [{ stake: self, round: { id: '1' } }], xstakeAggregates: [{ total: community, round: { id: '1' } }] }],
    });
    expect(await amounts(mine, alice)).toEqual(only('5', '7'));
    expect(await amounts(theirs, alice)).toEqual(only('1000', '3000'));
    expect((await mine.events.eventsOfRound(addr(alice), '1')).map((e) => e.amount).sort()).toEqual(['5', '7']);

    // An import is recorded as the configured contract's, so the other configuration does not count it.
    const imported = { type: 'selfStake', roundId: '1', staker: addr(alice), amount: '11', staked: true, txHash: '0x' + 'ab'.repeat(32), logIndex: 0, blockNumber: 1 };
    expect(await mine.stakes.importEvents([imported])).toMatchObject({ stored: 1 });
    expect(await amounts(mine, alice)).toEqual(only('16', '7'));
    expect(await amounts(theirs, alice)).toEqual(only('1000', '3000'));
    // With no contract configured, every stored event counts.
    expect(await amounts(services({ STAKING_CONTRACT_ADDRESS: '' }), alice)).toEqual(only('1016', '3007'));
  });

  it('runs in a start/stop loop that picks up new blocks, and reports failures without stopping', async () => {
    const s = services();
    const indexer = s.indexer!;
    const runs: IndexRun[] = [];
    indexer.on('indexed', (run: IndexRun) => runs.push(run));
    indexer.start();
    try {
      await createRound();
      await stake(carol, 1, BIG);
      await expect.poll(() => amounts(s, carol), { timeout: 5000, interval: 50 }).toEqual({
        users: [{ address: addr(carol), stakes: [{ stake: BIG.toString(), round: { id: '1' } }], xstakeAggregates: [] }],
      });
      expect(runs.length).toBeGreaterThan(0);
    } finally {
      await indexer.stop();
    }
    // Stopped: a new stake is not picked up.
    await stake(carol, 1, 1n);
    await new Promise((r) => setTimeout(r, 300));
    expect((await amounts(s, carol)).users[0]!.stakes).toEqual([{ stake: BIG.toString(), round: { id: '1' } }]);

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
    expect(await database.db.selectFrom('staking_cursors').selectAll().execute()).toEqual([]);
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
