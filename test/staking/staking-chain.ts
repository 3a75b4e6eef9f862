/**
 * The staking tests' chain and database: IdentityStaking compiled and deployed afresh on anvil before
 * each test, one migrated database per kind (emptied before each test), wallets, and the calls and
 * staking services the tests use on them.
 */
import type { Address } from 'viem';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { createStakingServices, type StakingServices } from '../../src/staking/staking.module.js';
import { type DatabaseKind, openMigratedTestDatabase, type TestDatabase } from '../helpers/databases.js';
import type { Anvil, Artifact, TestWallet } from '../helpers/evm.js';

/** Registers the per-kind database and the per-test contract of a describe block; read the fields inside tests. */
export class StakingChain {
  test!: TestDatabase;
  database!: Database;
  contract!: Address;
  deployBlock!: bigint;
  owner!: TestWallet;
  alice!: TestWallet;
  bob!: TestWallet;
  carol!: TestWallet;
  dave!: TestWallet;
  private extraDatabases: Database[] = [];

  constructor(
    kind: DatabaseKind,
    readonly anvil: () => Anvil,
    readonly staking: () => Artifact,
  ) {
    // One database per kind (creating and migrating one costs about a second on PostgreSQL); emptied before each test.
    beforeAll(async () => {
      ({ test: this.test, database: this.database } = await openMigratedTestDatabase(kind));
    });
    afterAll(async () => {
      await this.database.close();
      await this.test.drop();
    });
    beforeEach(async () => {
      await this.database.db.deleteFrom('stake_events').execute();
      await this.database.db.deleteFrom('staking_cursors').execute();
      this.extraDatabases = [];
      [this.owner, this.alice, this.bob, this.carol, this.dave] = this.anvil().wallets as [TestWallet, TestWallet, TestWallet, TestWallet, TestWallet];
      ({ address: this.contract, blockNumber: this.deployBlock } = await this.anvil().deploy(this.owner, this.staking()));
    });
    afterEach(async () => {
      for (const db of this.extraDatabases) await db.close();
    });
  }

  readonly addr = (w: TestWallet) => w.account.address.toLowerCase();
  readonly call = (w: TestWallet, fn: string, args: readonly unknown[]) => this.anvil().write(w, this.contract, this.staking().abi, fn, args);
  readonly createRound = () => this.call(this.owner, 'createRound', []);
  readonly stake = (w: TestWallet, round: number, amount: bigint) => this.call(w, 'stake', [BigInt(round), amount]);
  readonly unstake = (w: TestWallet, round: number, amount: bigint) => this.call(w, 'unstake', [BigInt(round), amount]);
  readonly stakeOn = (w: TestWallet, round: number, users: TestWallet[], amounts: bigint[]) =>
    this.call(w, 'stakeUsers', [BigInt(round), users.map((u) => u.account.address), amounts]);
  readonly unstakeOn = (w: TestWallet, round: number, users: TestWallet[], amounts: bigint[]) =>
    this.call(w, 'unstakeUsers', [BigInt(round), users.map((u) => u.account.address), amounts]);

  readonly services = (env: Record<string, string> = {}, db: Database = this.database): StakingServices => {
    const config = loadConfig({
      DATABASE_URL: this.test.url,
      STAKING_RPC_URL: this.anvil().url,
      STAKING_CONTRACT_ADDRESS: this.contract,
      STAKING_START_BLOCK: this.deployBlock.toString(),
      STAKING_CONFIRMATIONS: '0',
      STAKING_BLOCK_RANGE: '3',
      STAKING_POLL_MS: '100',
      ...env,
    });
    return createStakingServices(config, db);
  };

  /** A second connection to the same database: what a restarted process would open. */
  readonly reopen = (): Database => {
    const db = this.test.open();
    this.extraDatabases.push(db);
    return db;
  };

  readonly amounts = (s: StakingServices, w: TestWallet) => s.stakes.amountsFor(this.addr(w));
}
