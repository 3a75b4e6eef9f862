import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/** The columns a bounty list filters on besides its order, carried in the list indexes below. */
const BOUNTY_FILTER_COLUMNS = ['is_open', 'expires_date', 'experience_level', 'project_length', 'bounty_type'] as const;

/** Order indexes of the most used list orders, rebuilt with the filter columns after `(order, id)`. */
const WIDENED_ORDER_INDEXES = ['value_in_eth_sort', 'value_in_usdt_sort', 'value_in_usdt_now_sort', 'web3_created'] as const;

/**
 * Two things of the performance work, in the one migration number it was given:
 *
 * - `stake_events.contract_address`: the staking contract an event was emitted by (lower case), so
 *   stake totals count only the configured contract's events. Chain rows stored before it get the
 *   contract of the indexer cursor when there is exactly one; other rows keep null (unknown).
 * - Bounty list indexes that carry the filter columns, so that a filtered list tests its filters in
 *   the index and reads a table row only for the rows it returns, and its capped count never reads
 *   the table: `bounties_filters_idx` for counts, and the widened order indexes for the walks.
 */
export function stakeContract(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('stake_events').addColumn('contract_address', 'text').execute();
      const cursors = await sql<{ contract_address: string }>`select contract_address from staking_cursors`.execute(db);
      if (cursors.rows.length === 1) {
        const contract = cursors.rows[0]!.contract_address.toLowerCase();
        await sql`update stake_events set contract_address = ${contract} where source = 'chain'`.execute(db);
      }
      await db.schema.createIndex('stake_events_contract_idx').on('stake_events').column('contract_address').execute();

      await db.schema
        .createIndex('bounties_filters_idx')
        .on('bounties')
        .columns([...BOUNTY_FILTER_COLUMNS, 'bounty_owner_address', 'id'])
        .execute();
      for (const column of WIDENED_ORDER_INDEXES) {
        await db.schema.createIndex(`bounties_${column}_filters_idx`).on('bounties').columns([column, 'id', ...BOUNTY_FILTER_COLUMNS]).execute();
        await db.schema.dropIndex(`bounties_${column}_idx`).execute();
      }
      // The default list (open bounties, newest first) walks (is_open, web3_created, id).
      await db.schema
        .createIndex('bounties_open_web3_created_filters_idx')
        .on('bounties')
        .columns(['is_open', 'web3_created', 'id', 'expires_date', 'experience_level', 'project_length', 'bounty_type'])
        .execute();
      await db.schema.dropIndex('bounties_open_web3_created_idx').execute();
    },
  };
}
