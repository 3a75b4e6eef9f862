import { type Kysely, type Migration, sql } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType, withIdColumn } from '../dialect.js';

/**
 * Batch scoring: a batch, its addresses (one row per input position, with the result
 * once scored), the chunks workers lease (ranges of positions, like scoring_jobs), and each key's
 * daily address usage for the per-tier quota. Identical on both databases.
 */
export function batches(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('batches')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('key_id', 'integer', (c) => c.notNull())
        .addColumn('scorer_id', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('PENDING', 'RUNNING', 'DONE', 'CANCELLED')`))
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('finished_at', timeColumnType)
        .execute();
      await db.schema.createIndex('batches_account_idx').on('batches').columns(['account_id', 'created_at']).execute();

      await db.schema
        .createTable('batch_items')
        .addColumn('batch_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('address', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'done', 'failed')`))
        .addColumn('result', 'text')
        .addColumn('error', 'text')
        .addColumn('finished_at', timeColumnType)
        .addPrimaryKeyConstraint('batch_items_pk', ['batch_id', 'position'])
        .execute();

      // Chunks are claimed in id order: oldest batch first, its chunks in position order.
      await withIdColumn(dialect, db.schema.createTable('batch_chunks'))
        .addColumn('batch_id', 'text', (c) => c.notNull())
        .addColumn('chunk_no', 'integer', (c) => c.notNull())
        .addColumn('first_position', 'integer', (c) => c.notNull())
        .addColumn('last_position', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('queued', 'running', 'done', 'cancelled')`))
        .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', timeColumnType)
        .addUniqueConstraint('batch_chunks_batch_uq', ['batch_id', 'chunk_no'])
        .execute();
      await db.schema.createIndex('batch_chunks_state_idx').on('batch_chunks').columns(['state', 'id']).execute();

      await db.schema
        .createTable('batch_usage')
        .addColumn('key_id', 'integer', (c) => c.notNull())
        /** The UTC day, YYYY-MM-DD. */
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('addresses', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('batch_usage_pk', ['key_id', 'day'])
        .execute();
    },
  };
}
