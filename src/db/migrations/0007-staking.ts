import { type Kysely, type Migration, sql } from 'kysely';
import { type DialectName, timeColumnType } from '../dialect.js';

/**
 * Staking events and the indexer cursor. Round ids and wei amounts are uint256:
 * they are stored as decimal text on both databases (SQLite has no exact integer
 * type wider than 64 bits, and one portable representation keeps one code path);
 * sums are computed with BigInt in TypeScript, never in SQL.
 */
export function staking(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('stake_events')
        .addColumn('tx_hash', 'text', (c) => c.notNull())
        .addColumn('log_index', 'integer', (c) => c.notNull())
        .addColumn('block_number', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('selfStake', 'xStake')`))
        .addColumn('round_id', 'text', (c) => c.notNull())
        .addColumn('staker', 'text', (c) => c.notNull())
        .addColumn('user_address', 'text')
        .addColumn('amount', 'text', (c) => c.notNull())
        .addColumn('staked', 'integer', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('chain', 'import')`))
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addPrimaryKeyConstraint('stake_events_pk', ['tx_hash', 'log_index'])
        .execute();
      await db.schema.createIndex('stake_events_staker_idx').on('stake_events').columns(['staker', 'type']).execute();
      await db.schema.createIndex('stake_events_user_idx').on('stake_events').columns(['user_address', 'type']).execute();

      await db.schema
        .createTable('staking_cursors')
        .addColumn('contract_address', 'text', (c) => c.primaryKey())
        .addColumn('last_block', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', timeColumnType, (c) => c.notNull())
        .execute();
    },
  };
}
