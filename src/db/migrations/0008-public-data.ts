import type { Kysely, Migration } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType, withIdColumn } from '../dialect.js';

/**
 * Profiles, grants (with team members), grant rounds, contributions, bounties
 * and export credentials. Identical on both databases except that text columns
 * a list is ordered by compare by code point (see `orderedTextType`).
 *
 * Bounties have one `(field, id)` index per sortable field, so that every
 * `order_by` (ascending or descending, ties broken by id in the same direction)
 * walks an index and stops at `limit`; exact filters (`pk`, `github_url`,
 * `is_open`) are index lookups. Substring filters are checked on the rows the
 * index walk visits.
 */
export function publicData(dialect: DialectName): Migration {
  const orderedText = orderedTextType(dialect);
  return {
    async up(db: Kysely<any>) {
      await withIdColumn(dialect, db.schema.createTable('profiles'))
        .addColumn('handle', 'text', (c) => c.notNull())
        .addColumn('handle_key', orderedText, (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('avatar_url', 'text')
        .addColumn('github_url', 'text')
        .addColumn('keywords', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('total_earned', 'text', (c) => c.notNull().defaultTo('0'))
        .addColumn('organizations', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('export_opt_out', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('updated_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('profiles_handle_key_uq').on('profiles').column('handle_key').unique().execute();
      await db.schema.createIndex('profiles_opt_out_idx').on('profiles').columns(['export_opt_out', 'id']).execute();

      await db.schema
        .createTable('grants')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('title_key', orderedText, (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('description_hash', 'text', (c) => c.notNull())
        .addColumn('reference_url', 'text', (c) => c.notNull())
        .addColumn('logo', 'text')
        .addColumn('admin_address', orderedText, (c) => c.notNull())
        .addColumn('admin_profile_id', 'integer', (c) => c.references('profiles.id'))
        .addColumn('amount_received', 'text', (c) => c.notNull())
        .addColumn('token_address', 'text')
        .addColumn('token_symbol', 'text', (c) => c.notNull())
        .addColumn('contract_address', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('required_gas_price', 'text', (c) => c.notNull())
        .addColumn('grant_type', orderedText, (c) => c.notNull())
        .addColumn('created_on', timeColumnType, (c) => c.notNull())
        .addColumn('modified_on', timeColumnType, (c) => c.notNull())
        .execute();
      // The list shows active grants by id; each exact filter has its own index.
      await db.schema.createIndex('grants_active_idx').on('grants').columns(['active', 'id']).execute();
      await db.schema.createIndex('grants_title_key_idx').on('grants').columns(['title_key', 'id']).execute();
      await db.schema.createIndex('grants_description_hash_idx').on('grants').columns(['description_hash', 'id']).execute();
      await db.schema.createIndex('grants_admin_address_idx').on('grants').columns(['admin_address', 'id']).execute();
      await db.schema.createIndex('grants_grant_type_idx').on('grants').columns(['grant_type', 'id']).execute();
      await db.schema.createIndex('grants_admin_profile_idx').on('grants').column('admin_profile_id').execute();

      await db.schema
        .createTable('grant_team_members')
        .addColumn('grant_id', 'integer', (c) => c.notNull().references('grants.id').onDelete('cascade'))
        .addColumn('profile_id', 'integer', (c) => c.notNull().references('profiles.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('grant_team_members_pk', ['grant_id', 'profile_id'])
        .execute();
      await db.schema.createIndex('grant_team_members_profile_idx').on('grant_team_members').columns(['profile_id', 'grant_id']).execute();

      await db.schema
        .createTable('grant_rounds')
        .addColumn('number', 'integer', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('start_at', timeColumnType, (c) => c.notNull())
        .addColumn('end_at', timeColumnType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('contributions')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('grant_id', 'integer', (c) => c.notNull().references('grants.id'))
        .addColumn('round_number', 'integer', (c) => c.references('grant_rounds.number'))
        .addColumn('profile_id', 'integer', (c) => c.references('profiles.id'))
        .addColumn('address', orderedText, (c) => c.notNull())
        .addColumn('amount', 'text', (c) => c.notNull())
        .addColumn('token_symbol', 'text', (c) => c.notNull())
        .addColumn('created_on', timeColumnType, (c) => c.notNull())
        .addColumn('comment', 'text', (c) => c.notNull())
        .addColumn('anonymized', 'integer', (c) => c.notNull())
        .execute();
      // Address exports read distinct addresses in address order straight from these.
      await db.schema.createIndex('contributions_round_address_idx').on('contributions').columns(['round_number', 'address']).execute();
      await db.schema.createIndex('contributions_grant_address_idx').on('contributions').columns(['grant_id', 'address']).execute();
      await db.schema
        .createIndex('contributions_grant_round_address_idx')
        .on('contributions')
        .columns(['grant_id', 'round_number', 'address'])
        .execute();
      await db.schema.createIndex('contributions_address_idx').on('contributions').column('address').execute();
      // Opt-out: the addresses of opted-out profiles.
      await db.schema.createIndex('contributions_profile_address_idx').on('contributions').columns(['profile_id', 'address']).execute();
      // Contributor info in time order.
      await db.schema
        .createIndex('contributions_grant_round_created_idx')
        .on('contributions')
        .columns(['grant_id', 'round_number', 'created_on', 'id'])
        .execute();

      await db.schema
        .createTable('bounties')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('title', orderedText, (c) => c.notNull())
        .addColumn('github_url', orderedText, (c) => c.notNull())
        .addColumn('github_org_name', orderedText, (c) => c.notNull())
        .addColumn('github_repo_name', orderedText, (c) => c.notNull())
        .addColumn('github_issue_number', 'text', (c) => c.notNull())
        .addColumn('created_on', timeColumnType, (c) => c.notNull())
        .addColumn('modified_on', timeColumnType, (c) => c.notNull())
        .addColumn('web3_created', timeColumnType, (c) => c.notNull())
        .addColumn('expires_date', timeColumnType, (c) => c.notNull())
        .addColumn('value_in_token', 'text', (c) => c.notNull())
        .addColumn('value_in_token_sort', orderedText, (c) => c.notNull())
        .addColumn('token_name', orderedText, (c) => c.notNull())
        .addColumn('token_address', 'text')
        .addColumn('bounty_type', orderedText, (c) => c.notNull())
        .addColumn('project_length', orderedText, (c) => c.notNull())
        .addColumn('experience_level', orderedText, (c) => c.notNull())
        .addColumn('keywords', 'text', (c) => c.notNull())
        .addColumn('current_bounty', 'integer', (c) => c.notNull())
        .addColumn('value_in_eth', 'text')
        .addColumn('value_in_eth_sort', orderedText, (c) => c.notNull())
        .addColumn('value_in_usdt', 'text')
        .addColumn('value_in_usdt_sort', orderedText, (c) => c.notNull())
        .addColumn('value_in_usdt_now', 'text')
        .addColumn('value_in_usdt_now_sort', orderedText, (c) => c.notNull())
        .addColumn('action_urls', 'text', (c) => c.notNull())
        .addColumn('paid', 'text', (c) => c.notNull())
        .addColumn('status', orderedText, (c) => c.notNull())
        .addColumn('is_open', 'integer', (c) => c.notNull())
        .addColumn('bounty_owner_address', orderedText, (c) => c.notNull())
        .addColumn('bounty_owner_email', 'text', (c) => c.notNull())
        .addColumn('bounty_owner_github_username', orderedText, (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('fulfiller_address', 'text')
        .addColumn('fulfiller_email', 'text')
        .addColumn('fulfiller_github_username', 'text')
        .addColumn('fulfiller_metadata', 'text', (c) => c.notNull())
        .execute();
      for (const column of BOUNTY_ORDER_COLUMNS) {
        await db.schema.createIndex(`bounties_${column}_idx`).on('bounties').columns([column, 'id']).execute();
      }
      // The most common list: open bounties, newest first.
      await db.schema.createIndex('bounties_open_web3_created_idx').on('bounties').columns(['is_open', 'web3_created', 'id']).execute();

      await withIdColumn(dialect, db.schema.createTable('export_credentials'))
        .addColumn('profile_id', 'integer', (c) => c.notNull().references('profiles.id').onDelete('cascade'))
        .addColumn('api_key', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('last_used_at', timeColumnType)
        .execute();
      await db.schema.createIndex('export_credentials_key_uq').on('export_credentials').column('api_key').unique().execute();
      await db.schema.createIndex('export_credentials_profile_uq').on('export_credentials').column('profile_id').unique().execute();
    },
  };
}

/**
 * Bounty columns with a `(column, id)` index: every `order_by` field's column
 * except `id` itself (the primary key). Frozen with this migration; a later
 * sortable field needs a new migration.
 */
const BOUNTY_ORDER_COLUMNS = [
  'created_on',
  'modified_on',
  'web3_created',
  'expires_date',
  'title',
  'github_url',
  'github_org_name',
  'github_repo_name',
  'token_name',
  'bounty_type',
  'project_length',
  'experience_level',
  'status',
  'is_open',
  'bounty_owner_address',
  'bounty_owner_github_username',
  'value_in_token_sort',
  'value_in_eth_sort',
  'value_in_usdt_sort',
  'value_in_usdt_now_sort',
] as const;
