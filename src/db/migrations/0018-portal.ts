import type { Kysely, Migration } from 'kysely';
import { type DialectName, timeColumnType } from '../dialect.js';

/**
 * Developer portal: an account remembers the wallet that owns it (set when the
 * portal's first sign-in of that wallet created it), portal sign-in nonces and sessions (only
 * a hash of the session token is stored), and the usage counters of each API key per UTC day.
 * Identical on both databases; existing accounts get no owner (the CLI created them).
 */
export function portal(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('accounts').addColumn('owner_address', 'text').execute();
      await db.schema.createIndex('accounts_owner_address_idx').unique().on('accounts').column('owner_address').execute();

      await db.schema
        .createTable('portal_siwe_nonces')
        .addColumn('nonce', 'text', (c) => c.primaryKey())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('expires_at', timeColumnType, (c) => c.notNull())
        .addColumn('used_at', timeColumnType)
        .execute();
      await db.schema.createIndex('portal_siwe_nonces_expires_idx').on('portal_siwe_nonces').column('expires_at').execute();

      await db.schema
        .createTable('portal_sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('expires_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('portal_sessions_expires_idx').on('portal_sessions').column('expires_at').execute();

      // Day = days since 1970-01-01 (UTC): compact, ordered, and the same integer on both databases.
      await db.schema
        .createTable('key_usage_daily')
        .addColumn('key_id', 'integer', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
        .addColumn('day', 'integer', (c) => c.notNull())
        .addColumn('requests', timeColumnType, (c) => c.notNull().defaultTo(0))
        .addColumn('rate_limited', timeColumnType, (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('key_usage_daily_pk', ['key_id', 'day'])
        .execute();
    },
  };
}
