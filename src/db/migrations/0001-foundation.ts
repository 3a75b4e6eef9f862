import { type Kysely, type Migration, sql } from 'kysely';
import { type DialectName, timeColumnType, withIdColumn } from '../dialect.js';

export function foundation(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await withIdColumn(dialect, db.schema.createTable('accounts'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .execute();

      await withIdColumn(dialect, db.schema.createTable('scorers'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull().check(sqlIn('type', ['weighted', 'binary'])))
        .addColumn('threshold', 'text', (c) => c.notNull())
        .addColumn('weights', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('requires_signature', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('updated_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('scorers_account_idx').on('scorers').column('account_id').execute();

      await withIdColumn(dialect, db.schema.createTable('api_keys'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('prefix', 'text', (c) => c.notNull().unique())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('tier', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('can_submit', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('can_read', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('revoked_at', timeColumnType)
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute();

      await db.schema
        .createTable('nonces')
        .addColumn('nonce', 'text', (c) => c.primaryKey())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('expires_at', timeColumnType, (c) => c.notNull())
        .addColumn('used_at', timeColumnType)
        .execute();
      await db.schema.createIndex('nonces_expires_idx').on('nonces').column('expires_at').execute();
    },
  };
}

/** A CHECK that a column holds one of fixed literals written in this file (never user input). */
function sqlIn(column: string, values: string[]) {
  return sql.raw(`${column} in (${values.map((v) => `'${v}'`).join(', ')})`);
}
