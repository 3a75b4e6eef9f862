import type { Insertable, Selectable, UpdateQueryBuilder, UpdateResult } from 'kysely';
import { compiledOnce, type Database, type Db } from '../../db/connection.js';
import { isOneOf, lockScoreEventLog, scorerIdForPlanner } from '../../db/dialect.js';
import type { ScoreEventSink } from '../../events/score-event-sink.js';
import type { ScoreEventsTable, ScoresTable, ScoreStatus, Tables } from '../../db/tables/index.js';
import type { ScoringOutcome } from './score-outcome.js';
import { chunkRecording } from './chunk-recording.js';
import {
  differsFromEvent,
  holdsToWrite,
  NullifierTaken,
  processingState,
  refreshedRow,
  type ScoreVersion,
  type SettledScoring,
  settledColumns,
  type TrackedScoreRow,
  unchangedSince,
} from './settled-scoring.js';

export type { ChunkEntry } from './chunk-recording.js';
export { NullifierTaken, type ScoreVersion, type SettledScoring, type TrackedScoreRow, unchangedRefresh } from './settled-scoring.js';

export type ScoreEventRow = Selectable<ScoreEventsTable>;
export type NewScoreEvent = Insertable<ScoreEventsTable>;
export type ScoreRow = ScoresTable;

export interface RecordScoringOptions {
  /** Runs inside the same write transaction, after the score and its event (batch items). */
  withinTransaction?: (trx: Db) => Promise<void>;
  /** The score row as this transaction found it under its lock, when the caller read it (see `unchangedSince`). */
  previous?: TrackedScoreRow;
}

export interface RecordedScoring {
  row: ScoreRow;
  /** The appended event's id; null when the result equals the latest event (nothing appended). */
  appendedEventId: number | null;
}

export interface ScoreRecordsOptions {
  /** Hear every appended event in its transaction (the webhook outbox; see events/score-event-sink.ts). */
  sinks?: readonly ScoreEventSink[];
}

/**
 * The score record: the only writer of `scores` (the projection), `score_events` (the append-only
 * log) and `nullifier_holds` (dedup's claims). Its one write path of a settled scoring (v1 job
 * completion and failure, v2 synchronous scoring, batches) takes the holds, writes the row and,
 * when the result changed, appends the event, all in the caller's transaction;
 * `appendScoreEvent` is the only insert into score_events. A queued submission's PROCESSING row
 * and an unchanged re-score's refresh are written here too.
 */
export function scoreRecordsRepository(database: Database, options: ScoreRecordsOptions = {}) {
  const { dialect } = database;
  const sinks = options.sinks ?? [];
  const markProcessing = compiledOnce((db: Db, scorerId: number, address: string, now: number) =>
    db
      .insertInto('scores')
      .values({ scorer_id: scorerId, address, ...processingState(now) })
      .onConflict((oc) => oc.columns(['scorer_id', 'address']).doUpdateSet(processingState(now))),
  );
  // An unchanged re-score in one statement, taking no lock first: written only while the row is
  // the version the scoring read (as recordInline's locked comparison) and no job of the address
  // exists (a job committed later marks the row PROCESSING after this write, and runs after it).
  const refreshIfVersion = compiledOnce(
    (
      db: Db,
      scorerId: number,
      address: string,
      now: number,
      rawScore: string | null,
      stampScores: string | null,
      expirationDate: number | null,
      eventId: number,
      lastScoreTimestamp: number,
      status: ScoreStatus,
    ) =>
      whereVersion(
        db.updateTable('scores').set({ last_score_timestamp: now, raw_score: rawScore, stamp_scores: stampScores, expiration_date: expirationDate }),
        scorerId,
        address,
        eventId,
        lastScoreTimestamp,
        status,
      ),
  );
  // The usual re-score: the untracked columns equal the stored ones too, so only the timestamp is
  // written, under the same conditions. Setting a column rewrites every index holding it, even to
  // the value it holds: the expiration-date index's page was one of a refresh's four WAL frames.
  const touchIfVersion = compiledOnce(
    (db: Db, scorerId: number, address: string, now: number, eventId: number, lastScoreTimestamp: number, status: ScoreStatus) =>
      whereVersion(db.updateTable('scores').set({ last_score_timestamp: now }), scorerId, address, eventId, lastScoreTimestamp, status),
  );

  const latestUpdate = compiledOnce((db: Db, scorerId: number, address: string) =>
    db
      .selectFrom('score_events')
      .selectAll()
      .where('scorer_id', '=', scorerIdForPlanner(dialect, scorerId))
      .where('address', '=', address)
      .where('type', '=', 'score.updated')
      .orderBy('id', 'desc')
      .limit(1),
  );
  const latestUpdateAtOrBefore = compiledOnce((db: Db, scorerId: number, address: string, at: number) =>
    db
      .selectFrom('score_events')
      .selectAll()
      .where('scorer_id', '=', scorerIdForPlanner(dialect, scorerId))
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
    // Every event reaches its listeners (the webhook outbox) in its own transaction.
    for (const sink of sinks) await sink(trx, [{ id, scorerId: event.scorer_id, type: event.type ?? 'score.updated', createdAt: event.created_at }]);
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

    /** recordScoring of many distinct addresses of one scorer in `trx`, in a few statements (chunk-recording.ts). */
    recordScorings: chunkRecording(dialect, sinks),

    /** The score rows of these addresses for the scorer, by address (those without one are absent). */
    async rowsOf(db: Db, scorerId: number, addresses: readonly string[]): Promise<Map<string, ScoreRow>> {
      if (addresses.length === 0) return new Map();
      const rows = await db
        .selectFrom('scores')
        .selectAll()
        .where('scorer_id', '=', scorerIdForPlanner(dialect, scorerId))
        .where(isOneOf(dialect, 'address', addresses))
        .execute();
      return new Map(rows.map((row) => [row.address, row as ScoreRow]));
    },

    /** A submission's row while its job runs, in the transaction that queues the job. */
    async markProcessing(trx: Db, scorerId: number, address: string, now: number): Promise<void> {
      await markProcessing(trx, scorerId, address, now);
    },

    /**
     * An unchanged re-score (`refreshed`, from unchangedRefresh) written over the row it was scored
     * over, in one statement and only while the row is still that `version` and no job of the
     * address exists; numAffectedRows 0 when it was not.
     */
    refreshOverVersion(db: Db, scorerId: number, address: string, now: number, refreshed: ScoreRow, version: NonNullable<ScoreVersion['row']>) {
      const untrackedEqual =
        (refreshed.raw_score ?? null) === (version.raw_score ?? null) &&
        refreshed.stamp_scores === version.stamp_scores &&
        sameTime(refreshed.expiration_date, version.expiration_date);
      return untrackedEqual
        ? touchIfVersion(db, scorerId, address, now, version.event_id!, version.last_score_timestamp, version.status)
        : refreshIfVersion(db, scorerId, address, now, refreshed.raw_score ?? null, refreshed.stamp_scores, refreshed.expiration_date, version.event_id!, version.last_score_timestamp, version.status);
    },

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

export type ScoreRecordsRepository = ReturnType<typeof scoreRecordsRepository>;

type ScoresUpdate = UpdateQueryBuilder<Tables, 'scores', 'scores', UpdateResult>;

/** Written only while the row is the version the scoring read and no job of the address exists. */
function whereVersion(query: ScoresUpdate, scorerId: number, address: string, eventId: number, lastScoreTimestamp: number, status: ScoreStatus): ScoresUpdate {
  return query
    .where('scorer_id', '=', scorerId)
    .where('address', '=', address)
    .where('event_id', '=', eventId)
    .where('last_score_timestamp', '=', lastScoreTimestamp)
    .where('status', '=', status)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('scoring_jobs').select('scoring_jobs.id').where('scoring_jobs.scorer_id', '=', scorerId).where('scoring_jobs.address', '=', address))),
    );
}

/** Two epoch-ms columns equal (PostgreSQL may answer a bigint as text). */
function sameTime(a: number | string | null, b: number | string | null): boolean {
  return a === null || b === null ? a === b : Number(a) === Number(b);
}

