import { type Database, type Db, writeStatement, writeTransaction } from '../../db/connection.js';
import { type BatchRow, type NewBatch, spendDailyUsage } from './batches.repository.js';
import type { PackedAddresses } from './packed-addresses.js';

/**
 * The writes that create a batch. A batch of up to `uploadInsertRows` addresses is written in one
 * transaction. A larger one in steps, so that no transaction holds SQLite's event loop (its driver
 * is synchronous) or a database's write lock for long: a `batch_uploads` row, the items
 * `uploadInsertRows` at a time (each step its own transaction, the event loop yielded to between
 * them by the caller), then one transaction that spends the quota, writes the `batches` row and
 * the chunks and deletes the upload row. Workers claim chunks and readers find `batches` rows, so
 * until that last transaction commits nobody sees the batch; if the process dies before it, the
 * upload row marks its items as belonging to no batch and the batch worker deletes them
 * (batch-retention.repository).
 */

/** Items a step of an upload writes: a few milliseconds of SQLite's time. */
export const uploadInsertRows = 500;
// Rows per multi-row insert: 4 to 7 values each stays far below both databases' parameter limits.
const insertRows = 500;

/** The upload row was gone when the batch was to be written (deleted as abandoned): nothing was written. */
export class UploadLost extends Error {
  constructor() {
    super('batch upload lost');
  }
}

export function batchUploadsRepository(database: Database) {
  async function insertItems(trx: Db, batchId: string, first: number, addresses: readonly string[]): Promise<void> {
    for (let start = 0; start < addresses.length; start += insertRows) {
      const values = addresses.slice(start, start + insertRows).map((address, i) => ({
        batch_id: batchId,
        position: first + start + i,
        address,
        state: 'pending' as const,
        result: null,
        error: null,
        finished_at: null,
      }));
      await trx.insertInto('batch_items').values(values).execute();
    }
  }

  /** The usage, the batch row and its chunks: what makes a batch exist for workers and readers. */
  async function writeBatch(trx: Db, batch: NewBatch, total: number, chunkSize: number): Promise<BatchRow> {
    await spendDailyUsage(trx, batch, total);
    const row: BatchRow = {
      id: batch.id,
      account_id: batch.accountId,
      key_id: batch.keyId,
      scorer_id: batch.scorerId,
      status: 'PENDING',
      total,
      done: 0,
      failed: 0,
      created_at: batch.createdAt,
      finished_at: null,
    };
    await trx.insertInto('batches').values(row).execute();
    const chunks = [];
    for (let first = 0, chunkNo = 0; first < total; first += chunkSize, chunkNo++) {
      chunks.push({
        batch_id: batch.id,
        chunk_no: chunkNo,
        first_position: first,
        last_position: Math.min(total, first + chunkSize) - 1,
        state: 'queued' as const,
        done: 0,
        failed: 0,
      });
    }
    for (let start = 0; start < chunks.length; start += insertRows) {
      await trx.insertInto('batch_chunks').values(chunks.slice(start, start + insertRows)).execute();
    }
    return row;
  }

  return {
    /** A batch of at most `uploadInsertRows` addresses, whole, in one transaction (QuotaExceeded: nothing written). */
    async createWhole(batch: NewBatch, addresses: PackedAddresses, chunkSize: number): Promise<BatchRow> {
      return writeTransaction(database, async (trx) => {
        const row = await writeBatch(trx, batch, addresses.count, chunkSize);
        await insertItems(trx, batch.id, 0, addresses.slice(0, addresses.count));
        return row;
      });
    },

    /** Opens an upload in steps: its items may be written from now on. */
    async beginUpload(batch: NewBatch): Promise<void> {
      await writeStatement(database, (db) =>
        db.insertInto('batch_uploads').values({ batch_id: batch.id, account_id: batch.accountId, started_at: batch.createdAt }).execute(),
      );
    },

    /** One step: the items from position `first` on, in a transaction of their own. */
    async insertItems(batchId: string, first: number, addresses: readonly string[]): Promise<void> {
      await writeTransaction(database, (trx) => insertItems(trx, batchId, first, addresses));
    },

    /**
     * Ends an upload: the quota, the batch row and its chunks, and the upload row deleted, in one
     * transaction. QuotaExceeded or UploadLost: nothing of this step was written (the items are
     * still there, for `discardUpload`).
     */
    async commitUpload(batch: NewBatch, total: number, chunkSize: number): Promise<BatchRow> {
      return writeTransaction(database, async (trx) => {
        const open = await trx.deleteFrom('batch_uploads').where('batch_id', '=', batch.id).returning('batch_id').execute();
        if (open.length === 0) throw new UploadLost();
        return writeBatch(trx, batch, total, chunkSize);
      });
    },
  };
}

export type BatchUploadsRepository = ReturnType<typeof batchUploadsRepository>;
