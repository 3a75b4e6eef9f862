import { type Kysely, type Migration, sql } from 'kysely';
import { type DialectName, timeColumnType } from '../dialect.js';

/**
 * Fair webhook claiming. `webhook_endpoints.last_claim_turn` is the number of the claim that last took a delivery
 * of the endpoint (0: never): the claim serves the account whose latest turn is oldest, and within it the endpoint
 * whose turn is oldest, so one account's backlog cannot hold back another's. The indexes keep the claim's look-ups
 * (the account's latest turn, its attempts in flight, the next turn number) index probes rather than scans.
 * `webhook_deliveries.manual_retries` counts the account's manual retries of a delivery, which are limited.
 */
export function webhookFairness(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('webhook_endpoints').addColumn('last_claim_turn', timeColumnType, (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('webhook_deliveries').addColumn('manual_retries', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('webhook_endpoints_account_turn_idx').on('webhook_endpoints').columns(['account_id', 'last_claim_turn']).execute();
      await db.schema.createIndex('webhook_endpoints_turn_idx').on('webhook_endpoints').column('last_claim_turn').execute();
      // The attempts in flight, per endpoint: few rows, however long the backlog behind them.
      await db.schema
        .createIndex('webhook_deliveries_running_idx')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'lease_expires_at'])
        .where(sql.ref('state'), '=', sql.lit('running'))
        .execute();
    },
  };
}
