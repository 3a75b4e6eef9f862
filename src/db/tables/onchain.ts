/** Tables of the operator push (migrations 0029 and 0030). */

export type PushJobStatus = 'queued' | 'done';

export interface OnchainPushJobsTable {
  /** Random text id (`push_…`). */
  id: string;
  chain_id: number;
  scorer_id: number;
  /** The scorer's account: its scores are the ones attested. */
  account_id: number;
  /** Lower-case address of ONCHAIN_SENDER_KEY when queued; only a worker with that key works the job. */
  sender: string;
  total: number;
  status: PushJobStatus;
  /** Earliest time an item of the job is due (a retry's back-off); claims skip it before. */
  run_after: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  finished_at: number | null;
  /** A batch this push waits for: no item is worked before the batch has ended. */
  after_batch_id: string | null;
}

/** `sent`: signed, stored and (maybe) broadcast, receipt not seen yet. The last three are final. */
export type PushItemState = 'pending' | 'sent' | 'attested' | 'skipped' | 'failed';

export interface OnchainPushItemsTable {
  job_id: string;
  /** 0-based index in the list (after duplicates were dropped). */
  position: number;
  /** Lower-case. */
  address: string;
  state: PushItemState;
  /** The score.updated event whose score the transaction attests. */
  score_event_id: number | null;
  sender_nonce: number | null;
  /** The signed transaction (0x hex), stored before it is first broadcast. */
  raw_tx: string | null;
  tx_hash: string | null;
  /** The score attestation's EAS UID, from the receipt's Attested log. */
  uid: string | null;
  /** Why it failed (a revert's custom error name), or the last transient error while pending. */
  reason: string | null;
  /** Transient failures so far (the back-off grows with them). */
  attempts: number;
  retry_at: number;
  finished_at: number | null;
}

/** One row per (chain, scorer, address, score event) a transaction was sent or attested for. */
export interface OnchainPushSendsTable {
  chain_id: number;
  scorer_id: number;
  address: string;
  score_event_id: number;
  job_id: string;
  position: number;
}

export interface OnchainSenderNoncesTable {
  chain_id: number;
  /** Lower-case. */
  sender: string;
  next_nonce: number;
}

/** When each push worker last looked for work, and with which sender key. */
export interface OnchainPushWorkersTable {
  owner: string;
  /** Lower-case address of the worker's ONCHAIN_SENDER_KEY. */
  sender: string;
  seen_at: number;
}

export interface OnchainTables {
  onchain_push_workers: OnchainPushWorkersTable;
  onchain_push_jobs: OnchainPushJobsTable;
  onchain_push_items: OnchainPushItemsTable;
  onchain_push_sends: OnchainPushSendsTable;
  onchain_sender_nonces: OnchainSenderNoncesTable;
}
