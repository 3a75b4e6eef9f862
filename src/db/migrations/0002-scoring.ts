import type { Kysely, Migration } from 'kysely';
import { type DialectName, timeColumnType, withIdColumn } from '../dialect.js';

export function scoring(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await withIdColumn(dialect, db.schema.createTable('stamps'))
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('nullifiers', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('credential', 'text', (c) => c.notNull())
        .addColumn('issuance_date', timeColumnType, (c) => c.notNull())
        .addColumn('expiration_date', timeColumnType, (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('updated_at', timeColumnType, (c) => c.notNull())
        .addColumn('deleted_at', timeColumnType)
        .addColumn('revoked_at', timeColumnType)
        .execute();
      await db.schema.createIndex('stamps_address_digest_uq').on('stamps').columns(['address', 'digest']).unique().execute();
      await db.schema.createIndex('stamps_address_created_idx').on('stamps').columns(['address', 'created_at', 'id']).execute();
      await db.schema.createIndex('stamps_digest_idx').on('stamps').column('digest').execute();

      await db.schema
        .createTable('trusted_issuers')
        .addColumn('did', 'text', (c) => c.primaryKey())
        .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('scores')
        .addColumn('scorer_id', 'integer', (c) => c.notNull().references('scorers.id').onDelete('cascade'))
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('score', 'text')
        .addColumn('evidence', 'text')
        .addColumn('error', 'text')
        .addColumn('last_score_timestamp', timeColumnType, (c) => c.notNull())
        .addPrimaryKeyConstraint('scores_pk', ['scorer_id', 'address'])
        .execute();
      await db.schema
        .createIndex('scores_scorer_timestamp_idx')
        .on('scores')
        .columns(['scorer_id', 'last_score_timestamp', 'address'])
        .execute();

      await db.schema
        .createTable('nullifier_holds')
        .addColumn('scorer_id', 'integer', (c) => c.notNull().references('scorers.id').onDelete('cascade'))
        .addColumn('nullifier', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('expires_at', timeColumnType, (c) => c.notNull())
        .addPrimaryKeyConstraint('nullifier_holds_pk', ['scorer_id', 'nullifier'])
        .execute();

      await withIdColumn(dialect, db.schema.createTable('scoring_jobs'))
        .addColumn('scorer_id', 'integer', (c) => c.notNull().references('scorers.id').onDelete('cascade'))
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('claimed_generation', 'integer')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('run_after', timeColumnType, (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', timeColumnType)
        .addColumn('last_error', 'text')
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('scoring_jobs_key_uq').on('scoring_jobs').columns(['scorer_id', 'address']).unique().execute();
      await db.schema.createIndex('scoring_jobs_due_idx').on('scoring_jobs').columns(['state', 'run_after']).execute();
    },
  };
}
