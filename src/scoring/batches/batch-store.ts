import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type BatchRetentionRepository, deleteRows } from './batch-retention.repository.js';
import { type BatchUploadsRepository, uploadInsertRows } from './batch-uploads.repository.js';
import type { BatchRow, NewBatch } from './batches.repository.js';
import type { PackedAddresses } from './packed-addresses.js';

/**
 * Writes a checked batch: whole in one transaction when it is small, else in steps of
 * `uploadInsertRows` items with the event loop yielded to between them (other requests are
 * served meanwhile, and their writes go between the steps), the batch becoming visible only in
 * the last step (batch-uploads.repository). If a step fails (the quota was spent by another batch
 * meanwhile, the database), the items written so far are deleted before the error is thrown; if
 * the process dies, the batch worker deletes them later. Either way no batch is left half written.
 */
export async function storeBatch(
  uploads: BatchUploadsRepository,
  retention: BatchRetentionRepository,
  batch: NewBatch,
  addresses: PackedAddresses,
  chunkSize: number,
): Promise<BatchRow> {
  if (addresses.count <= uploadInsertRows) return uploads.createWhole(batch, addresses, chunkSize);
  await uploads.beginUpload(batch);
  try {
    for (let first = 0; first < addresses.count; first += uploadInsertRows) {
      await uploads.insertItems(batch.id, first, addresses.slice(first, first + uploadInsertRows));
      await yieldToEventLoop();
    }
    return await uploads.commitUpload(batch, addresses.count, chunkSize);
  } catch (error) {
    await discardUpload(retention, batch.id).catch(() => {
      // Left to the batch worker, which deletes the items of abandoned uploads.
    });
    throw error;
  }
}

/** Deletes the items of an upload that did not end, a bounded statement at a time, then its row. */
export async function discardUpload(retention: BatchRetentionRepository, batchId: string, keepGoing: () => boolean = () => true): Promise<boolean> {
  if (!(await deleteAllItems(retention, batchId, keepGoing))) return false;
  await retention.deleteUpload(batchId);
  return true;
}

/** Deletes a batch's items a bounded statement at a time; false when `keepGoing` stopped it first. */
export async function deleteAllItems(retention: BatchRetentionRepository, batchId: string, keepGoing: () => boolean): Promise<boolean> {
  for (;;) {
    const deleted = await retention.deleteItems(batchId);
    await yieldToEventLoop();
    if (deleted < deleteRows) return true;
    if (!keepGoing()) return false;
  }
}
