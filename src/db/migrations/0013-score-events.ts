import { type Kysely, type Migration, sql } from 'kysely';
import { type DialectName, timeColumnType } from '../dialect.js';

/**
 * The append-only score event log (docs/decisions.md "v2 and the score event log") and the
 * columns the v2 score needs beside each score row, so that the stored v2 result is one row read.
 *
 * Backfill: one `score.updated` event per settled (DONE/ERROR) score row, derived from what is
 * stored: the raw score is the evidence's `rawScore` for binary scorers, else the score; the
 * breakdown is `stamp_scores` with `dedup` false and the row's `expiration_date` for every stamp
 * (the per-stamp expiries were never stored); the threshold is the scorer's. PROCESSING rows get
 * no event: their job writes the first one when it completes.
 */
export function scoreEvents(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      const table = db.schema.createTable('score_events');
      await (dialect === 'postgres'
        ? table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
        : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        .addColumn('type', 'text', (c) => c.notNull().defaultTo('score.updated'))
        .addColumn('scorer_id', 'integer', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('score', 'text')
        .addColumn('raw_score', 'text')
        .addColumn('passing', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('threshold', 'text')
        .addColumn('evidence', 'text')
        .addColumn('stamps', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('expiration_date', timeColumnType)
        .addColumn('error', 'text')
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('score_events_address_idx').on('score_events').columns(['scorer_id', 'address', 'id']).execute();
      await db.schema.createIndex('score_events_scorer_idx').on('score_events').columns(['scorer_id', 'id']).execute();

      await db.schema.alterTable('scores').addColumn('raw_score', 'text').execute();
      await db.schema.alterTable('scores').addColumn('passing', 'integer').execute();
      await db.schema.alterTable('scores').addColumn('threshold', 'text').execute();
      await db.schema.alterTable('scores').addColumn('stamps', 'text').execute();
      await db.schema.alterTable('scores').addColumn('event_id', 'bigint').execute();

      await backfill(db);
    },
  };
}

const BATCH = 1000;

async function backfill(db: Kysely<any>): Promise<void> {
  // Keyset pages over the primary key, so a large table is never held in memory at once.
  let after: { scorer_id: number; address: string } | null = null;
  for (;;) {
    let query = db
      .selectFrom('scores as s')
      .innerJoin('scorers as sc', 'sc.id', 's.scorer_id')
      .select(['s.scorer_id', 's.address', 's.status', 's.score', 's.evidence', 's.error', 's.last_score_timestamp', 's.expiration_date', 's.stamp_scores', 'sc.threshold'])
      .where('s.status', 'in', ['DONE', 'ERROR'])
      .orderBy('s.scorer_id')
      .orderBy('s.address')
      .limit(BATCH);
    if (after) {
      const { scorer_id, address } = after;
      // A row value, so that both databases use it as an index bound (an OR of the two parts is not).
      query = query.where(sql<boolean>`(s.scorer_id, s.address) > (${scorer_id}, ${address})`);
    }
    const rows = await query.execute();
    if (rows.length === 0) return;
    for (const row of rows) {
      const derived = derive(row);
      const inserted = await db
        .insertInto('score_events')
        .values({
          type: 'score.updated',
          scorer_id: row.scorer_id,
          address: row.address,
          status: row.status,
          score: row.status === 'DONE' ? row.score : null,
          evidence: row.status === 'DONE' ? row.evidence : null,
          error: row.status === 'ERROR' ? row.error : null,
          expiration_date: row.expiration_date,
          created_at: Number(row.last_score_timestamp),
          ...derived,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db
        .updateTable('scores')
        .set({ ...derived, event_id: Number(inserted.id) })
        .where('scorer_id', '=', row.scorer_id)
        .where('address', '=', row.address)
        .execute();
    }
    const last = rows[rows.length - 1] as { scorer_id: number; address: string };
    after = { scorer_id: last.scorer_id, address: last.address };
  }
}

interface StoredRow {
  status: string;
  score: string | null;
  evidence: string | null;
  expiration_date: number | string | null;
  stamp_scores: string | null;
  threshold: string;
}

/** The v2 columns of a row scored before the event log existed, from what it stored. */
function derive(row: StoredRow): { raw_score: string | null; passing: number; threshold: string | null; stamps: string } {
  const threshold = fiveDigits(row.threshold);
  if (row.status !== 'DONE') return { raw_score: null, passing: 0, threshold, stamps: '{}' };
  let raw = row.score;
  if (row.evidence) {
    try {
      const evidence = JSON.parse(row.evidence) as { rawScore?: unknown };
      if (typeof evidence.rawScore === 'string') raw = evidence.rawScore;
    } catch {
      // Evidence the service wrote itself is JSON; anything else keeps the score.
    }
  }
  const expiry = row.expiration_date === null ? null : new Date(Number(row.expiration_date)).toISOString().replace('Z', '+00:00');
  const weights = row.stamp_scores ? (JSON.parse(row.stamp_scores) as Record<string, string>) : {};
  const stamps = Object.fromEntries(
    Object.keys(weights)
      .sort()
      .map((provider) => [provider, { score: weights[provider], dedup: false, expiration_date: expiry }]),
  );
  const passing = raw !== null && threshold !== null && compareDecimal(raw, threshold) >= 0 ? 1 : 0;
  return { raw_score: raw === null ? null : fiveDigits(raw), passing, threshold, stamps: JSON.stringify(stamps) };
}

// A migration is frozen once shipped, so it does not import the live decimal module.
function fiveDigits(text: string | null): string | null {
  if (text === null || !/^-?\d+(\.\d+)?$/.test(text.trim())) return null;
  const [whole, fraction = ''] = text.trim().split('.');
  return `${whole}.${(fraction + '00000').slice(0, 5)}`;
}

function compareDecimal(a: string, b: string): number {
  const scale = (t: string) => {
    const [w, f = ''] = t.split('.');
    return BigInt(w + (f + '0'.repeat(20)).slice(0, 20));
  };
  const d = scale(a) - scale(b);
  return d > 0n ? 1 : d < 0n ? -1 : 0;
}
