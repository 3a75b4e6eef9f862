import type { Kysely, Migration } from 'kysely';
import { timeColumnType } from '../dialect.js';

/**
 * Batch uploads written in steps, and batch retention. A large batch's items are inserted in
 * many small transactions (one long one would hold SQLite's event loop and write lock); while
 * that goes on, the batch has a row here and none in `batches` or `batch_chunks`, so no worker
 * can claim it and no reader can see it. The transaction that writes the batch row and its
 * chunks deletes this row: a batch is either whole or not there. A row left behind (the process
 * died mid-upload) marks items that belong to no batch; the batch worker deletes them once the
 * row is old enough that no upload can still be writing. `batches_finished_idx` finds the
 * batches past their retention.
 */
export function batchUploads(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('batch_uploads')
        .addColumn('batch_id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('started_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('batch_uploads_started_idx').on('batch_uploads').column('started_at').execute();
      await db.schema.createIndex('batches_finished_idx').on('batches').column('finished_at').execute();
    },
  };
}
