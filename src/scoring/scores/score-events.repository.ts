import type { Insertable, Selectable } from 'kysely';
import { compiledOnce, type Database, type Db } from '../../db/connection.js';
import { lockScoreEventLog } from '../../db/dialect.js';
import type { ScoreEventsTable, ScoresTable, ScoreStatus } from '../../db/tables.js';
import type { ScoringOutcome } from '../jobs/scoring-jobs.repository.js';
import { insertOutboxRow } from '../../webhooks/delivery-queue.repository.js';

export type ScoreEventRow = Selectable<ScoreEventsTable>;
export type NewScoreEvent = Insertable<ScoreEventsTable>;
type ScoreRow = ScoresTable;

/** A settled scoring: what the score row becomes and what the event log records. */
export type SettledScoring =
  | { status: 'DONE'; outcome: ScoringOutcome }
  /** `threshold` (5 dp) when the scorer's threshold is known, so the v2 error answer can show it. */
  | { status: 'ERROR'; error: string; threshold?: string | null };

export interface RecordScoringOptions {
  /** Runs inside the same write transaction, after the score and its event (batch items). */
  withinTransaction?: (trx: Db) => Promise<void>;
  /** The score row as this transaction found it under its lock, when the caller read it (see `unchangedSince`). */
  previous?: TrackedScoreRow;
}

/** What a score row tells of its latest event: the tracked columns and the event it points at. */
export type TrackedScoreRow = Pick<ScoreRow, 'status' | 'score' | 'passing' | 'threshold' | 'evidence' | 'error' | 'stamps' | 'event_id'>;

/** The columns a result is compared on with the latest event (spec v2.md "Score events"), as an event or a row holds them. */
interface TrackedEvent {
  status: ScoreStatus;
  score?: string | null;
  passing?: number | null;
  threshold?: string | null;
  evidence?: string | null;
  error?: string | null;
  stamps?: string | null;
}

export interface RecordedScoring {
  row: ScoreRow;
  /** The appended event's id; null when the result equals the latest event (nothing appended). */
  appendedEventId: number | null;
}

/**
 * Another address took a nullifier the result counted on, between scoring and recording: the
 * transaction must roll back and the address be scored again.
 */
export class NullifierTaken extends Error {
  constructor() {
    super('a nullifier the score counted on was taken by another address');
    this.name = 'NullifierTaken';
  }
}

/** The score row and event columns of a settled result. */
function settledColumns(result: SettledScoring) {
  if (result.status === 'ERROR') {
    return {
      status: 'ERROR' as const,
      score: null,
      raw_score: null,
      passing: 0,
      threshold: result.threshold ?? null,
      evidence: null,
      // Nothing counted for a failed scoring: `{}`, so clients that iterate stamp_scores keep working.
      stamp_scores: '{}',
      stamps: '{}',
      expiration_date: null,
      error: result.error,
    };
  }
  const { outcome } = result;
  return {
    status: 'DONE' as const,
    score: outcome.score,
    raw_score: outcome.rawScore ?? outcome.score,
    passing: outcome.passing ? 1 : 0,
    threshold: outcome.threshold ?? null,
    evidence: outcome.evidence,
    stamp_scores: outcome.stampScores,
    stamps: outcome.stamps ?? '{}',
    expiration_date: outcome.expirationDate,
    error: null,
  };
}

type Settled = ReturnType<typeof settledColumns>;

/**
 * Whether a result equals the latest event, told by the row it replaces, so that re-scoring an
 * unchanged passport need not read the event log. A settled row pointing at an event holds that
 * event's tracked columns, and that event is the latest `score.updated` one: recordScoring is the
 * only writer of both and points the row at every event it appends (a PROCESSING row is not
 * settled). Rows the 0013 backfill wrote may differ from their event in a column the event left
 * out, so only equality is trusted; a difference is settled by reading the event.
 */
function unchangedSince(settled: Settled, previous: TrackedScoreRow | undefined): boolean {
  if (!previous || previous.event_id == null || (previous.status !== 'DONE' && previous.status !== 'ERROR')) return false;
  return !differsFromEvent(settled, previous);
}

/** The claims a recording must write: a live hold of the address with the same expiry needs none. */
function holdsToWrite(outcome: ScoringOutcome, now: number): ScoringOutcome['claims'] {
  // Holds are never deleted, and a live hold cannot pass to another address before it expires.
  return outcome.claims.filter((claim) => !(claim.heldAlready && claim.expiresAt > now));
}

/**
 * A DONE result that equals the row it was scored over (`previous`, with its event) and needs no
 * hold written: the whole recording is then a refresh of the untracked columns, and the row it
 * leaves is returned with them. Null when the result needs recordScoring.
 */
export function unchangedRefresh(
  outcome: ScoringOutcome,
  previous: TrackedScoreRow | undefined,
  scorerId: number,
  address: string,
  now: number,
): ScoreRow | null {
  const settled = settledColumns({ status: 'DONE', outcome });
  if (!previous || !unchangedSince(settled, previous) || holdsToWrite(outcome, now).length > 0) return null;
  return refreshedRow(scorerId, address, settled, now, previous);
}

/** The row a refresh leaves: the result's columns, the new timestamp, the event it already pointed at. */
function refreshedRow(scorerId: number, address: string, settled: Settled, now: number, previous: TrackedScoreRow): ScoreRow {
  return { scorer_id: scorerId, address, ...settled, last_score_timestamp: now, event_id: previous.event_id };
}

/** Whether a settled result differs from an event in what the log tracks (spec v2.md "Score events"). */
export function differsFromEvent(settled: Settled, event: TrackedEvent | undefined): boolean {
  return (
    event === undefined ||
    event.status !== settled.status ||
    event.score !== settled.score ||
    Number(event.passing) !== settled.passing ||
    event.threshold !== settled.threshold ||
    event.evidence !== settled.evidence ||
    event.error !== settled.error ||
    event.stamps !== settled.stamps
  );
}

/**
 * The one write path of a settled scoring (v1 job completion and failure, v2 synchronous scoring,
 * batches): nullifier holds, the score row (the projection) and, when the result changed, the
 * score event, all in the caller's transaction. `appendScoreEvent` is the only insert into
 * score_events.
 */
export function scoreEventsRepository(database: Database) {
  const { dialect } = database;
  const latestUpdate = compiledOnce((db: Db, scorerId: number, address: string) =>
    db
      .selectFrom('score_events')
      .selectAll()
      .where('scorer_id', '=', scorerId)
      .where('address', '=', address)
      .where('type', '=', 'score.updated')
      .orderBy('id', 'desc')
      .limit(1),
  );
  const latestUpdateAtOrBefore = compiledOnce((db: Db, scorerId: number, address: string, at: number) =>
    db
      .selectFrom('score_events')
      .selectAll()
      .where('scorer_id', '=', scorerId)
      .where('address', '=', address)
      .where('type', '=', 'score.updated')
      .where('created_at', '<=', at)
      .orderBy('id', 'desc')
      .limit(1),
  );
  // Every settled scoring writes the row: built and compiled once, run with each result's values.
  const writeRow = compiledOnce(
    (
      db: Db,
      scorerId: number,
      address: string,
      now: number,
      status: ScoreStatus,
      score: string | null,
      rawScore: string | null,
      passing: number,
      threshold: string | null,
      evidence: string | null,
      stampScores: string,
      stamps: string,
      expirationDate: number | null,
      error: string | null,
    ) => {
      const columns = {
        status,
        score,
        raw_score: rawScore,
        passing,
        threshold,
        evidence,
        stamp_scores: stampScores,
        stamps,
        expiration_date: expirationDate,
        error,
        last_score_timestamp: now,
      };
      return db
        .insertInto('scores')
        .values({ scorer_id: scorerId, address, ...columns, event_id: null })
        .onConflict((oc) => oc.columns(['scorer_id', 'address']).doUpdateSet(columns))
        .returningAll();
    },
  );
  // A result equal to the row's (see unchangedSince): only what the log does not track is written,
  // so the big texts equal to the stored ones are neither sent again nor read back.
  const refreshRow = compiledOnce(
    (db: Db, scorerId: number, address: string, now: number, rawScore: string | null, stampScores: string, expirationDate: number | null) =>
      db
        .updateTable('scores')
        .set({ last_score_timestamp: now, raw_score: rawScore, stamp_scores: stampScores, expiration_date: expirationDate })
        .where('scorer_id', '=', scorerId)
        .where('address', '=', address),
  );
  const setEventId = compiledOnce((db: Db, scorerId: number, address: string, eventId: number) =>
    db.updateTable('scores').set({ event_id: eventId }).where('scorer_id', '=', scorerId).where('address', '=', address),
  );

  async function appendScoreEvent(trx: Db, event: NewScoreEvent): Promise<number> {
    await lockScoreEventLog(dialect, trx, event.scorer_id);
    const inserted = await trx.insertInto('score_events').values(event).returning('id').executeTakeFirstOrThrow();
    const id = Number(inserted.id);
    // Every event reaches the webhook outbox in its own transaction (issue 16).
    await insertOutboxRow(trx, { id, scorerId: event.scorer_id, type: event.type ?? 'score.updated', createdAt: event.created_at });
    return id;
  }

  async function takeHolds(trx: Db, scorerId: number, address: string, outcome: ScoringOutcome, now: number): Promise<void> {
    const toWrite = holdsToWrite(outcome, now);
    if (toWrite.length === 0) return;
    // One statement for every hold; a nullifier another live address holds is not returned.
    const taken = await trx
      .insertInto('nullifier_holds')
      .values(toWrite.map((claim) => ({ scorer_id: scorerId, nullifier: claim.nullifier, address, expires_at: claim.expiresAt })))
      .onConflict((oc) =>
        oc
          .columns(['scorer_id', 'nullifier'])
          .doUpdateSet((eb) => ({ address: eb.ref('excluded.address'), expires_at: eb.ref('excluded.expires_at') }))
          .where((eb) => eb.or([eb('nullifier_holds.address', '=', address), eb('nullifier_holds.expires_at', '<=', now)])),
      )
      .returning('nullifier')
      .execute();
    if (taken.length !== toWrite.length) throw new NullifierTaken();
  }

  return {
    appendScoreEvent,

    /**
     * Records a settled scoring in `trx`: takes the nullifier holds (throws NullifierTaken when
     * another address got one first), writes the score row, and appends an event unless the
     * result equals the latest one. The row is written before the latest event is read, so its
     * lock orders concurrent recordings of one address on PostgreSQL (no duplicate events).
     */
    async recordScoring(
      trx: Db,
      scorerId: number,
      address: string,
      result: SettledScoring,
      now: number,
      options: RecordScoringOptions = {},
    ): Promise<RecordedScoring> {
      if (result.status === 'DONE') await takeHolds(trx, scorerId, address, result.outcome, now);
      const settled = settledColumns(result);
      const s = settled;
      const previous = options.previous;
      if (previous && unchangedSince(settled, previous)) {
        const refreshed = await refreshRow(trx, scorerId, address, now, s.raw_score, s.stamp_scores, s.expiration_date);
        if (Number(refreshed.numAffectedRows ?? 0) !== 1) throw new Error('the score row was not written');
        const row = refreshedRow(scorerId, address, settled, now, previous);
        if (options.withinTransaction) await options.withinTransaction(trx);
        return { row, appendedEventId: null };
      }
      const written = (
        await writeRow(trx, scorerId, address, now, s.status, s.score, s.raw_score, s.passing, s.threshold, s.evidence, s.stamp_scores, s.stamps, s.expiration_date, s.error)
      ).rows[0];
      if (!written) throw new Error('the score row was not written');
      const row = written as ScoreRow;
      const latest = (await latestUpdate(trx, scorerId, address)).rows[0];
      let appendedEventId: number | null = null;
      if (differsFromEvent(settled, latest)) {
        const { stamp_scores: _v1Only, ...eventColumns } = settled;
        appendedEventId = await appendScoreEvent(trx, { type: 'score.updated', scorer_id: scorerId, address, ...eventColumns, created_at: now });
        await setEventId(trx, scorerId, address, appendedEventId);
        row.event_id = appendedEventId;
      } else if (row.event_id == null && latest) {
        await setEventId(trx, scorerId, address, Number(latest.id));
        row.event_id = Number(latest.id);
      }
      if (options.withinTransaction) await options.withinTransaction(trx);
      return { row, appendedEventId };
    },

    /** The latest score.updated event of an address at or before `at` (epoch ms): the score as it was then. */
    async scoreAt(db: Db, scorerId: number, address: string, at: number): Promise<ScoreEventRow | undefined> {
      return (await latestUpdateAtOrBefore(db, scorerId, address, at)).rows[0];
    },

    async latest(db: Db, scorerId: number, address: string): Promise<ScoreEventRow | undefined> {
      return (await latestUpdate(db, scorerId, address)).rows[0];
    },
  };
}

export type ScoreEventsRepository = ReturnType<typeof scoreEventsRepository>;
