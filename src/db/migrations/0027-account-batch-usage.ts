import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * The daily batch quota is the account's, shared by its keys and its portal session: a key minted
 * for the purpose must not start a fresh one. `batch_usage` is rebuilt keyed by account (the
 * primary key changes, which SQLite cannot alter in place); each account's usage of a day is the
 * sum of what its keys (and its session, key id minus the account id) queued that day. Operator
 * batches (key id 0) have no quota and are left out.
 */
export function accountBatchUsage(_dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('batch_account_usage')
        .addColumn('account_id', 'integer', (c) => c.notNull())
        /** The UTC day, YYYY-MM-DD. */
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('addresses', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('batch_account_usage_pk', ['account_id', 'day'])
        .execute();
      await sql`
        INSERT INTO batch_account_usage (account_id, day, addresses)
        SELECT account_id, day, SUM(addresses) FROM (
          SELECT CASE WHEN u.key_id < 0 THEN -u.key_id ELSE k.account_id END AS account_id, u.day, u.addresses
          FROM batch_usage u LEFT JOIN api_keys k ON k.id = u.key_id
          WHERE u.key_id <> 0
        ) usage_by_key
        WHERE account_id IS NOT NULL
        GROUP BY account_id, day
      `.execute(db);
      await db.schema.dropTable('batch_usage').execute();
      await db.schema.alterTable('batch_account_usage').renameTo('batch_usage').execute();
    },
  };
}
