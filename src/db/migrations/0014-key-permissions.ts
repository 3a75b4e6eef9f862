import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Key permissions: beside `can_submit` and `can_read` a key gets `create_scorers`
 * (on by default, so every existing key keeps what it could do and gains the account-management
 * endpoints) and `historical_endpoint` (off by default: history is opt-in, as v2.md says).
 * One column per permission keeps the authentication lookup the single indexed row read it was.
 * Plain added columns with defaults, identical on both databases.
 */
export function keyPermissions(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('api_keys').addColumn('can_create_scorers', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('api_keys').addColumn('can_read_history', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
