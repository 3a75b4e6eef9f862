import type { Db } from '../db/tables/index.js';

/** A score event as it is appended: its id in the log, its scorer, its type and time. */
export interface AppendedScoreEvent {
  id: number;
  scorerId: number;
  type: string;
  createdAt: number;
}

/**
 * Hears every score event inside the transaction that appends it, so that what it writes (the
 * webhook outbox row, an onchain push job) commits or rolls back with the event: no change
 * without its notice, no notice without its change. The score record writes through this
 * interface and so knows none of its listeners.
 */
export type ScoreEventSink = (trx: Db, event: AppendedScoreEvent) => Promise<void>;
