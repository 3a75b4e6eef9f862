/** Tables of batch scoring (migrations 0016 and 0024). */

import type { Generated } from 'kysely';

export type BatchStatus = 'PENDING' | 'RUNNING' | 'DONE' | 'CANCELLED';

export interface BatchesTable {
  /** Random text id (`bat_…`), never guessable from another batch's. */
  id: string;
  account_id: number;
  /** The API key that created it: its tier set the quota spent. */
  key_id: number;
  scorer_id: number;
  status: BatchStatus;
  total: number;
  /** Final counts, written when the batch ends; while it runs they are summed from its chunks. */
  done: number;
  failed: number;
  created_at: number;
  finished_at: number | null;
}

export type BatchItemState = 'pending' | 'done' | 'failed';

export interface BatchItemsTable {
  batch_id: string;
  /** 0-based index in the submitted list. */
  position: number;
  address: string;
  state: BatchItemState;
  /** JSON v2 score object once done; null while pending or when failed. */
  result: string | null;
  error: string | null;
  finished_at: number | null;
}

export type BatchChunkState = 'queued' | 'running' | 'done' | 'cancelled';

/** A range of a batch's positions that one worker leases and works off. */
export interface BatchChunksTable {
  /** Claim order across batches: oldest batch first, its chunks in position order. */
  id: Generated<number>;
  batch_id: string;
  chunk_no: number;
  first_position: number;
  last_position: number;
  state: BatchChunkState;
  /** Items of the chunk scored and failed, counted in the transaction that finishes each item. */
  done: number;
  failed: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
}

/** Addresses an account (any of its keys, its portal session) queued in batches on one UTC day (the daily quota). */
export interface BatchUsageTable {
  account_id: number;
  day: string;
  addresses: number;
}

/**
 * A batch whose items are being written in steps: its items exist, its `batches` row and chunks
 * not yet. Deleted in the transaction that writes those; one left behind marks items to delete.
 */
export interface BatchUploadsTable {
  batch_id: string;
  account_id: number;
  started_at: number;
}

export interface BatchTables {
  batches: BatchesTable;
  batch_items: BatchItemsTable;
  batch_chunks: BatchChunksTable;
  batch_usage: BatchUsageTable;
  batch_uploads: BatchUploadsTable;
}
