import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { type Anvil, type Artifact, compileContracts, freePort, startAnvil, type TestWallet } from '../helpers/evm.js';

const BIG = 2n ** 70n + 1n;

let anvil: Anvil;
let staking: Artifact;

beforeAll(async () => {
  staking = compileContracts('IdentityStaking.sol').IdentityStaking!;
  anvil = await startAnvil();
}, 60_000);
afterAll(async () => anvil?.stop());

describe.each(databaseKinds)('stampgate stake commands on %s', (kind) => {
  let test: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  // One database per kind (the first command migrates it); the staking tables are emptied before each test.
  beforeAll(async () => {
    test = await createTestDatabase(kind);
    dataDir = mkdtempSync(join(tmpdir(), 'stampgate-stake-cli-'));
    env = { DATABASE_URL: test.url, DATA_DIR: dataDir, STAMPGATE_ENV: 'development' };
  });
  afterAll(async () => {
    await test.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    const database = test.open();
    try {
      await migrateToLatest(database);
      await database.db.deleteFrom('stake_events').execute();
      await database.db.deleteFrom('staking_cursors').execute();
    } finally {
      await database.close();
    }
  });

  function writeJson(name: string, value: unknown): string {
    const file = join(dataDir, name);
    writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  }

  describe('stake index', () => {
    let contract: Address;
    let deployBlock: bigint;
    let alice: TestWallet;
    let indexEnv: Record<string, string>;

    beforeEach(async () => {
      const [owner] = anvil.wallets as [TestWallet];
      alice = anvil.wallets[1] as TestWallet;
      ({ address: contract, blockNumber: deployBlock } = await anvil.deploy(owner, staking));
      await anvil.write(owner, contract, staking.abi, 'createRound', []);
      await anvil.write(alice, contract, staking.abi, 'stake', [1n, BIG]);
      await anvil.write(alice, contract, staking.abi, 'unstake', [1n, 1n]);
      indexEnv = {
        ...env,
        STAKING_RPC_URL: anvil.url,
        STAKING_CONTRACT_ADDRESS: contract,
        STAKING_START_BLOCK: deployBlock.toString(),
        STAKING_CONFIRMATIONS: '1',
        STAKING_BLOCK_RANGE: '2',
      };
    });

    it('indexes up to head − confirmations, says what it did, and continues from there next time', async () => {
      const head = Number(await anvil.blockNumber());
      const first = await runCli(['stake', 'index', '--json'], indexEnv);
      expect(first.err).toBe('');
      expect(first.code).toBe(0);
      // The unstake in the head block waits for one confirmation.
      expect(first.json()).toEqual({
        contract: contract.toLowerCase(),
        head,
        safe_block: head - 1,
        confirmations: 1,
        from_block: Number(deployBlock),
        to_block: head - 1,
        requests: Math.ceil((head - Number(deployBlock)) / 2),
        logs: 1,
        stored: 1,
        unchanged: 0,
        last_block: head - 1,
      });

      const idle = await runCli(['stake', 'index'], indexEnv);
      expect(idle.code).toBe(0);
      expect(idle.out).toBe(`Up to date: ${contract.toLowerCase()} is indexed to block ${head - 1} (head ${head}, 1 confirmation(s), safe block ${head - 1}).`);

      await anvil.mine(1);
      const next = await runCli(['stake', 'index'], indexEnv);
      expect(next.code).toBe(0);
      expect(next.out).toBe(
        [
          `Indexed blocks ${head}-${head} of ${contract.toLowerCase()} in 1 request(s) (head ${head + 1}, 1 confirmation(s), safe block ${head}).`,
          '1 staking log(s): 1 new, 0 already stored.',
        ].join('\n'),
      );

      // Re-reading everything stores nothing new.
      const again = await runCli(['stake', 'index', '--from-block', deployBlock.toString(), '--json'], indexEnv);
      expect(again.json()).toMatchObject({ logs: 2, stored: 0, unchanged: 2, last_block: head });
    });

    it('fails with a clear message and exit 1 when the RPC endpoint is unreachable', async () => {
      const port = await freePort();
      const run = await runCli(['stake', 'index'], { ...indexEnv, STAKING_RPC_URL: `http://127.0.0.1:${port}/key/s3cret` });
      expect(run.code).toBe(1);
      expect(run.out).toBe('');
      expect(run.err).toBe(
        `error: Could not read the chain head from the staking RPC endpoint http://127.0.0.1:${port}: the endpoint could not be reached.`,
      );
    });

    it('refuses with exit 2 when the indexer is not configured', async () => {
      const run = await runCli(['stake', 'index'], env);
      expect(run.code).toBe(2);
      expect(run.err).toContain('STAKING_RPC_URL and STAKING_CONTRACT_ADDRESS must both be set');
    });

    it('refuses a bad --from-block with exit 2', async () => {
      const run = await runCli(['stake', 'index', '--from-block', 'soon'], indexEnv);
      expect(run.code).toBe(2);
      expect(run.err).toContain('"soon" is not a block number.');
    });
  });

  describe('stake import', () => {
    const staker = '0x' + 'a1'.repeat(20);
    const user = '0x' + 'b2'.repeat(20);
    const event = (n: number, extra: Record<string, unknown> = {}) => ({
      type: 'selfStake',
      roundId: '3',
      staker,
      amount: BIG.toString(),
      staked: true,
      txHash: '0x' + n.toString(16).padStart(64, '0'),
      logIndex: n,
      blockNumber: 100 + n,
      ...extra,
    });

    it('keeps the good records, reports the bad ones by index and field, and a re-import counts nothing twice', async () => {
      const file = writeJson('events.json', [
        event(1),
        event(2, { type: 'xStake', staker: user, user: staker, amount: '5' }),
        event(3, { txHash: 'nope', staked: 'yes' }),
        event(4, { type: 'xStake' }),
      ]);
      const run = await runCli(['stake', 'import', file], env);
      expect(run.err).toBe('');
      expect(run.code).toBe(0);
      expect(run.out).toBe(
        [
          'rejected [2] staked: must be true (stake) or false (unstake)',
          'rejected [2] txHash: must be 0x followed by 64 hexadecimal digits',
          'rejected [3] user: must be 0x followed by 40 hexadecimal digits for an xStake',
          '2 stored, 0 already stored, 2 rejected.',
        ].join('\n'),
      );

      const again = await runCli(['stake', 'import', file, '--json'], env);
      expect(again.json()).toEqual({
        stored: 0,
        unchanged: 2,
        rejected: 2,
        rejections: [
          { index: 2, field: 'staked', reason: expect.any(String) },
          { index: 2, field: 'txHash', reason: expect.any(String) },
          { index: 3, field: 'user', reason: expect.any(String) },
        ],
      });

      // What the API would answer, through the same services.
      const { openAppContext } = await import('../../src/cli/context.js');
      const { loadConfig } = await import('../../src/config/index.js');
      const ctx = await openAppContext(loadConfig(env));
      try {
        expect(await ctx.staking.stakes.amountsFor(staker)).toEqual({
          users: [
            {
              address: staker,
              stakes: [{ stake: BIG.toString(), round: { id: '3' } }],
              xstakeAggregates: [{ total: '5', round: { id: '3' } }],
            },
          ],
        });
      } finally {
        await ctx.database.close();
      }
    });

    it('refuses a file that is not JSON, not an array, or missing, with exit 1', async () => {
      const notJson = await runCli(['stake', 'import', writeJson('bad.json', '[{')], env);
      expect(notJson.code).toBe(1);
      expect(notJson.err).toMatch(/^error: .*bad\.json is not valid JSON/);
      const notArray = await runCli(['stake', 'import', writeJson('object.json', { events: [] })], env);
      expect(notArray.code).toBe(1);
      expect(notArray.err).toBe('error: The file must hold a JSON array of staking events.');
      const missing = await runCli(['stake', 'import', join(dataDir, 'none.json')], env);
      expect(missing.code).toBe(1);
      expect(missing.err).toContain('ENOENT');
    });
  });
});
