import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Security: a signing-message nonce remembers the account whose key asked for it;
 * a profile remembers the OAuth provider's stable subject id it logged in with; export
 * credentials keep a freshly created secret only until the first session response shows it.
 * Identical on both databases; existing rows get NULL (a nonce issued before the upgrade
 * belongs to no account and cannot be consumed; it expires within NONCE_TTL_SECONDS).
 */
export function security(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('nonces').addColumn('account_id', 'integer').execute();
      await db.schema.alterTable('profiles').addColumn('oauth_subject', 'text').execute();
      await db.schema.createIndex('profiles_oauth_subject_idx').unique().on('profiles').column('oauth_subject').execute();
      await db.schema.alterTable('export_credentials').addColumn('pending_secret', 'text').execute();
    },
  };
}
