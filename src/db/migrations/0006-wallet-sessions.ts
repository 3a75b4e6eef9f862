import type { Kysely, Migration } from 'kysely';
import { type DialectName, timeColumnType } from '../dialect.js';

/** Sign-In with Ethereum nonces and wallet session tokens. Identical on both databases. */
export function walletSessions(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('wallet_siwe_nonces')
        .addColumn('nonce', 'text', (c) => c.primaryKey())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('expires_at', timeColumnType, (c) => c.notNull())
        .addColumn('used_at', timeColumnType)
        .execute();
      await db.schema.createIndex('wallet_siwe_nonces_expires_idx').on('wallet_siwe_nonces').column('expires_at').execute();

      await db.schema
        .createTable('wallet_sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('expires_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('wallet_sessions_expires_idx').on('wallet_sessions').column('expires_at').execute();
    },
  };
}
