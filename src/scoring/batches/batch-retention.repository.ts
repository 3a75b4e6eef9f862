import { type Database, writeStatement, writeTransaction } from '../../db/connection.js';

/**
 * The deletes of batch retention, each bounded: items go `deleteRows` at a time (one statement
 * each, the caller yields to the event loop between them), so that removing a 100,000-address
 * batch never holds SQLite's event loop or a write lock for long. A batch's row goes last, with
 * its chunks, once its items are gone: until then a crash leaves it to the next sweep (it is past
 * its retention, so readers are answered 404 meanwhile).
 */

/** Rows one delete statement removes at most. */
export const deleteRows = 1000;

export function batchRetentionRepository(database: Database) {
  const { db } = database;
  return {
    /** Ids of batches that ended (DONE or CANCELLED) before `finishedBefore`, oldest first. */
    async endedBefore(finishedBefore: number, limit: number): Promise<string[]> {
      const rows = await db.selectFrom('batches').select('id').where('finished_at', '<', finishedBefore).orderBy('finished_at').limit(limit).execute();
      return rows.map((row) => row.id);
    },

    /** Ids of uploads begun before `startedBefore` that never ended: their items belong to no batch. */
    async abandonedUploads(startedBefore: number, limit: number): Promise<string[]> {
      const rows = await db.selectFrom('batch_uploads').select('batch_id').where('started_at', '<', startedBefore).orderBy('started_at').limit(limit).execute();
      return rows.map((row) => row.batch_id);
    },

    /** Deletes up to `deleteRows` items of the batch; how many it deleted (fewer: none are left). */
    async deleteItems(batchId: string): Promise<number> {
      const deleted = await writeStatement(database, (executor) =>
        executor
          .deleteFrom('batch_items')
          .where('batch_id', '=', batchId)
          .where('position', 'in', (eb) => eb.selectFrom('batch_items').select('position').where('batch_id', '=', batchId).orderBy('position').limit(deleteRows))
          .executeTakeFirst(),
      );
      return Number(deleted.numDeletedRows);
    },

    /** The batch row and its chunks (its items deleted before), in one transaction. */
    async deleteBatch(batchId: string): Promise<void> {
      await writeTransaction(database, async (trx) => {
        await trx.deleteFrom('batch_chunks').where('batch_id', '=', batchId).execute();
        await trx.deleteFrom('batches').where('id', '=', batchId).execute();
      });
    },

    /** The upload row (its items deleted before). */
    async deleteUpload(batchId: string): Promise<void> {
      await writeStatement(database, (executor) => executor.deleteFrom('batch_uploads').where('batch_id', '=', batchId).execute());
    },

    /**
     * The usage rows of the oldest UTC day before `day`, one day per statement; how many it
     * deleted (0: none are left). Only today's row is ever read (the daily quota), so deleting
     * older ones gives no quota back; `day` is at least a day before today.
     */
    async deleteUsageOfOneDayBefore(day: string): Promise<number> {
      const oldest = await db.selectFrom('batch_usage').select('day').where('day', '<', day).orderBy('day').limit(1).executeTakeFirst();
      if (!oldest) return 0;
      const deleted = await writeStatement(database, (executor) => executor.deleteFrom('batch_usage').where('day', '=', oldest.day).executeTakeFirst());
      return Number(deleted.numDeletedRows);
    },
  };
}

export type BatchRetentionRepository = ReturnType<typeof batchRetentionRepository>;
