import { type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, pendingMigrations } from '../../src/db/migrate.js';
import { allMigrations } from '../../src/db/migrations/index.js';
import { createTestDatabase, databaseKinds, migrateUpTo, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('migrations on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('applies every migration once and then has nothing pending', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      expect(await pendingMigrations(database)).toEqual(Object.keys(allMigrations(kind)));
      expect(await migrateToLatest(database)).toEqual(Object.keys(allMigrations(kind)));
      expect(await migrateToLatest(database)).toEqual([]);
      expect(await pendingMigrations(database)).toEqual([]);
      const tables = await database.db.introspection.getTables();
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['accounts', 'scorers', 'api_keys', 'nonces']));
    } finally {
      await database.close();
    }
  });

  it('0009-score-record backfills settled rows with stamp_scores {} and leaves PROCESSING rows null', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0008-public-data');
      const db = database.db as unknown as Kysely<any>;
      const account = await db.insertInto('accounts').values({ name: 'old', created_at: 1 }).returning('id').executeTakeFirstOrThrow();
      const scorer = await db
        .insertInto('scorers')
        .values({ account_id: account.id, name: 'old', type: 'weighted', threshold: '20', weights: '{}', requires_signature: 0, created_at: 1, updated_at: 1 })
        .returning('id')
        .executeTakeFirstOrThrow();
      const row = (address: string, status: string) => ({
        scorer_id: scorer.id,
        address,
        status,
        score: status === 'DONE' ? '1.00000' : null,
        evidence: null,
        error: status === 'ERROR' ? 'failed' : null,
        last_score_timestamp: 1,
      });
      await db.insertInto('scores').values([row('0x01', 'DONE'), row('0x02', 'ERROR'), row('0x03', 'PROCESSING')]).execute();
      const stakeEvent = (txHash: string, block: number, logIndex: number) => ({
        tx_hash: txHash,
        log_index: logIndex,
        block_number: block,
        type: 'selfStake',
        round_id: '1',
        staker: '0xaa',
        user_address: null,
        amount: '1',
        staked: 1,
        source: 'import',
        created_at: 1,
      });
      await db.insertInto('stake_events').values([stakeEvent('0xc', 9, 0), stakeEvent('0xa', 3, 2), stakeEvent('0xb', 3, 1)]).execute();

      expect(await migrateToLatest(database)).toContain('0009-score-record');
      const rows = await db.selectFrom('scores').select(['address', 'stamp_scores', 'expiration_date']).orderBy('address').execute();
      expect(rows).toEqual([
        { address: '0x01', stamp_scores: '{}', expiration_date: null },
        { address: '0x02', stamp_scores: '{}', expiration_date: null },
        { address: '0x03', stamp_scores: null, expiration_date: null },
      ]);
      // Stored staking events are numbered in chain order; later arrivals continue the numbering.
      await db.insertInto('stake_events').values(stakeEvent('0xd', 1, 0)).execute();
      const numbered = await db.selectFrom('stake_events').select(['tx_hash', 'id']).orderBy('tx_hash').execute();
      expect(numbered.map((r) => [r.tx_hash, Number(r.id)])).toEqual([
        ['0xa', 2],
        ['0xb', 1],
        ['0xc', 3],
        ['0xd', 4],
      ]);
    } finally {
      await database.close();
    }
  });

  it("0017-stake-contract gives chain events the single indexer cursor's contract and leaves imported ones unknown", async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0014-key-permissions');
      const db = database.db as unknown as Kysely<any>;
      const event = (txHash: string, source: string) => ({
        tx_hash: txHash, log_index: 0, block_number: 1, type: 'selfStake', round_id: '1', staker: '0xaa', user_address: null, amount: '1', staked: 1, source, created_at: 1,
      });
      await db.insertInto('stake_events').values([event('0x1', 'chain'), event('0x2', 'import')]).execute();
      await db.insertInto('staking_cursors').values({ contract_address: '0xABC0000000000000000000000000000000000001', last_block: 5, updated_at: 1 }).execute();
      expect(await migrateToLatest(database)).toContain('0017-stake-contract');
      const rows = await db.selectFrom('stake_events').select(['tx_hash', 'contract_address']).orderBy('tx_hash').execute();
      expect(rows).toEqual([
        { tx_hash: '0x1', contract_address: '0xabc0000000000000000000000000000000000001' },
        { tx_hash: '0x2', contract_address: null },
      ]);
    } finally {
      await database.close();
    }
  });

  it('0009-score-record numbers 20,000 staking events in one pass (seconds, not minutes)', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0008-public-data');
      const db = database.db as unknown as Kysely<any>;
      const count = 20_000;
      // Stored in reverse chain order, so that storage order is not the numbering.
      const events = Array.from({ length: count }, (_, i) => ({
        tx_hash: `0x${(count - i).toString(16).padStart(64, '0')}`,
        log_index: i % 3,
        block_number: count - i,
        type: 'selfStake',
        round_id: '1',
        staker: '0xaa',
        user_address: null,
        amount: '1',
        staked: 1,
        source: 'import',
        created_at: 1,
      }));
      for (let i = 0; i < count; i += 2000) await db.insertInto('stake_events').values(events.slice(i, i + 2000)).execute();

      const started = performance.now();
      expect(await migrateToLatest(database)).toContain('0009-score-record');
      const elapsedMs = performance.now() - started;
      // Generous for a loaded machine: one pass takes well under a second; a count per row took minutes.
      expect(elapsedMs).toBeLessThan(15_000);
      const ids = await db.selectFrom('stake_events').select(['block_number', 'id']).orderBy('block_number').execute();
      expect(ids.map((r) => Number(r.id))).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    } finally {
      await database.close();
    }
  }, 120_000);
});
