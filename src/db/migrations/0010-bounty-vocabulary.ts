import { type Kysely, type Migration, sql } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType } from '../dialect.js';

/**
 * The bounty vocabulary of the original service's public client: optional
 * columns for every field it filters or orders by, a table of the platform
 * usernames interested in or fulfilling each bounty, and indexes.
 *
 * Each orderable column that holds short values gets a `(column, id)` index, so
 * an order walks it in either direction and stops at `limit` (rows without a
 * value are read by a second walk, see bounties.repository.ts). Long free text
 * (`raw_data`, `issue_description`, `metadata`, `privacy_preferences`) is not
 * indexed: PostgreSQL refuses btree entries past about 2.7 kB, and those orders
 * are rare; they sort the filtered rows.
 */
export function bountyVocabulary(dialect: DialectName): Migration {
  const orderedText = orderedTextType(dialect);
  return {
    async up(db: Kysely<any>) {
      const columns: [string, 'text' | 'integer' | 'time'][] = [
        ['web3_type', 'text'],
        ['github_comments', 'integer'],
        ['bounty_owner_name', 'text'],
        ['raw_data', 'text'],
        ['contract_address', 'text'],
        ['network', 'text'],
        ['issue_description', 'text'],
        ['standard_bounties_id', 'integer'],
        ['num_fulfillments', 'integer'],
        ['balance', 'text'],
        ['balance_sort', 'text'],
        ['accepted', 'integer'],
        ['interested', 'text'],
        ['interested_count', 'integer'],
        ['interested_comment', 'integer'],
        ['submissions_comment', 'integer'],
        ['override_status', 'text'],
        ['last_comment_date', 'time'],
        ['fulfillment_accepted_on', 'time'],
        ['fulfillment_submitted_on', 'time'],
        ['fulfillment_started_on', 'time'],
        ['canceled_on', 'time'],
        ['snooze_warnings_for_days', 'integer'],
        ['token_value_time_peg', 'time'],
        ['token_value_in_usdt', 'text'],
        ['token_value_in_usdt_sort', 'text'],
        ['value_true', 'text'],
        ['value_true_sort', 'text'],
        ['privacy_preferences', 'text'],
        ['fulfillments', 'text'],
      ];
      for (const [name, type] of columns) {
        const columnType = type === 'text' ? orderedText : type === 'time' ? timeColumnType : 'integer';
        await db.schema.alterTable('bounties').addColumn(name, columnType).execute();
      }
      if (dialect === 'postgres') {
        // Orderable since this migration: compare by code point like every other ordered text column.
        for (const name of ['token_address', 'bounty_owner_email', 'metadata']) {
          await sql`alter table bounties alter column ${sql.ref(name)} type text collate "C"`.execute(db);
        }
      }
      for (const column of INDEXED_ORDER_COLUMNS) {
        await db.schema.createIndex(`bounties_${column}_idx`).on('bounties').columns([column, 'id']).execute();
      }
      // Long free text orders by its first 200 characters, ties by id.
      for (const column of PREFIX_ORDER_COLUMNS) {
        await sql`create index ${sql.id(`bounties_${column}_prefix_idx`)} on bounties ((substr(${sql.ref(column)}, 1, 200)), id)`.execute(db);
      }
      // bounty_owner_github_username: case-insensitive exact match.
      await db.schema
        .createIndex('bounties_owner_username_key_idx')
        .on('bounties')
        .expression(sql`lower(bounty_owner_github_username)`)
        .execute();

      await db.schema
        .createTable('bounty_people')
        .addColumn('bounty_id', 'integer', (c) => c.notNull().references('bounties.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('username_key', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('bounty_people_pk', ['role', 'username_key', 'bounty_id'])
        .execute();
      await db.schema.createIndex('bounty_people_bounty_idx').on('bounty_people').column('bounty_id').execute();
    },
  };
}

/** Columns ordered through `substr(column, 1, 200)` (must match ORDER_PREFIX_LENGTH in bounties.repository.ts). */
const PREFIX_ORDER_COLUMNS = ['raw_data', 'issue_description', 'metadata', 'privacy_preferences'] as const;

/** Frozen with this migration, like 0008's list. */
const INDEXED_ORDER_COLUMNS = [
  'web3_type',
  'github_comments',
  'bounty_owner_name',
  'contract_address',
  'network',
  'standard_bounties_id',
  'num_fulfillments',
  'balance_sort',
  'accepted',
  'interested_count',
  'interested_comment',
  'submissions_comment',
  'override_status',
  'last_comment_date',
  'fulfillment_accepted_on',
  'fulfillment_submitted_on',
  'fulfillment_started_on',
  'canceled_on',
  'snooze_warnings_for_days',
  'token_value_time_peg',
  'token_value_in_usdt_sort',
  'value_true_sort',
  'token_address',
  'bounty_owner_email',
  'current_bounty',
] as const;
