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
 * interface and so knows none of its listeners. `events` are what one write appended (one
 * scoring's event, or a batch step's), in log order: a listener writes them in one statement.
 */
export type ScoreEventSink = (trx: Db, events: readonly AppendedScoreEvent[]) => Promise<void>;
