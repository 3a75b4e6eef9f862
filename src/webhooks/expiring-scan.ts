import { type Database, type Db, writeTransaction } from '../db/connection.js';
import type { NewScoreEvent } from '../scoring/records/score-records.repository.js';

export type AppendScoreEvent = (trx: Db, event: NewScoreEvent) => Promise<number>;

const SCAN_BATCH = 200;

/**
 * score.expiring: scores (the projection) whose earliest counted stamp expires within the lead time get one
 * `score.expiring` event per (scorer, address, expiry date), appended through the event log's one write path so
 * that it reaches the outbox (webhooks) and the feed. The notice row is the guard: it is inserted first, in the
 * same transaction as the event, so concurrent scans (several workers) append the event once.
 */
export function expiringScan(database: Database, appendScoreEvent: AppendScoreEvent, leadMs: number) {
  const { db } = database;
  return async function scan(now: number): Promise<number> {
    let appended = 0;
    for (;;) {
      const due = await db
        .selectFrom('scores as s')
        .selectAll('s')
        .where('s.status', '=', 'DONE')
        .where('s.expiration_date', '>', now)
        .where('s.expiration_date', '<=', now + leadMs)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('score_expiry_notices as n')
                .select('n.scorer_id')
                .whereRef('n.scorer_id', '=', 's.scorer_id')
                .whereRef('n.address', '=', 's.address')
                .whereRef('n.expiration_date', '=', 's.expiration_date'),
            ),
          ),
        )
        .orderBy('s.expiration_date')
        .limit(SCAN_BATCH)
        .execute();
      for (const score of due) {
        const expiry = Number(score.expiration_date);
        const added = await writeTransaction(database, async (trx) => {
          const guard = await trx
            .insertInto('score_expiry_notices')
            .values({ scorer_id: score.scorer_id, address: score.address, expiration_date: expiry, event_id: 0, created_at: now })
            .onConflict((oc) => oc.columns(['scorer_id', 'address', 'expiration_date']).doNothing())
            .returning('scorer_id')
            .executeTakeFirst();
          if (!guard) return false;
          const eventId = await appendScoreEvent(trx, {
            type: 'score.expiring',
            scorer_id: score.scorer_id,
            address: score.address,
            status: 'DONE',
            score: score.score,
            raw_score: score.raw_score ?? null,
            passing: Number(score.passing ?? 0),
            threshold: score.threshold ?? null,
            evidence: score.evidence,
            stamps: score.stamps ?? '{}',
            expiration_date: expiry,
            error: null,
            created_at: now,
          });
          await trx
            .updateTable('score_expiry_notices')
            .set({ event_id: eventId })
            .where('scorer_id', '=', score.scorer_id)
            .where('address', '=', score.address)
            .where('expiration_date', '=', expiry)
            .execute();
          return true;
        });
        if (added) appended++;
      }
      if (due.length < SCAN_BATCH) return appended;
    }
  };
}
