import { compiledOnce, type Database, type Db, writeStatement, writeTransaction } from '../../db/connection.js';
import { lockSkippingLocked } from '../../db/dialect.js';
import type { ScoringJobsTable } from '../../db/tables/index.js';
import {
  NullifierTaken,
  type RecordedScoring,
  type ScoreRecordsRepository,
  type ScoreVersion,
  scoreRecordsRepository,
  unchangedRefresh,
} from '../records/score-records.repository.js';
import type { ScoringOutcome } from '../records/score-outcome.js';

export type ScoringJobRow = Omit<ScoringJobsTable, 'id'> & { id: number };
export type { ScoreVersion } from '../records/score-records.repository.js';



/** What `recordInline` did: recorded the scoring, or found a job of the address and joined it. */
export type InlineRecording = { kind: 'recorded'; recorded: RecordedScoring } | { kind: 'queued' };

/** Rolls the completion back so the job is queued to run again. */
class RunAgain extends Error {}

/** Rolls an inline recording back: a job of the address is queued or running. */
class JoinJob extends Error {}


export function scoringJobsRepository(database: Database, records: ScoreRecordsRepository = scoreRecordsRepository(database)) {
  const { db, dialect } = database;
  // Every submission runs these, so they are compiled once (see compiledOnce).
  const queueJob = compiledOnce((db: Db, scorerId: number, address: string, now: number) =>
    db
      .insertInto('scoring_jobs')
      .values({ scorer_id: scorerId, address, state: 'queued', generation: 1, attempts: 0, run_after: now, created_at: now })
      .onConflict((oc) =>
        oc.columns(['scorer_id', 'address']).doUpdateSet((eb) => ({
          generation: eb('scoring_jobs.generation', '+', 1),
          attempts: 0,
          run_after: now,
          last_error: null,
        })),
      ),
  );
  // One statement, so no transaction: the next due job (queued, or running with an expired lease)
  // is leased in the same breath it is found. PostgreSQL skips rows other claims have locked.
  const claimDueJob = compiledOnce((db: Db, now: number, owner: string, leaseExpiresAt: number) =>
    db
      .updateTable('scoring_jobs')
      .set((eb) => ({
        state: 'running',
        lease_owner: owner,
        lease_expires_at: leaseExpiresAt,
        attempts: eb('attempts', '+', 1),
        claimed_generation: eb.ref('generation'),
      }))
      .where('id', '=', (eb) =>
        lockSkippingLocked(
          dialect,
          eb
            .selectFrom('scoring_jobs')
            .select('id')
            .where((eb) =>
              eb.or([
                eb.and([eb('state', '=', 'queued'), eb('run_after', '<=', now)]),
                eb.and([eb('state', '=', 'running'), eb('lease_expires_at', '<', now)]),
              ]),
            )
            .orderBy('run_after')
            .orderBy('id')
            .limit(1),
        ),
      )
      .returningAll(),
  );
  const jobForUpdate = compiledOnce((db: Db, id: number) => {
    // The row lock makes completion and claim-after-lease-expiry mutually exclusive on PostgreSQL.
    const query = db.selectFrom('scoring_jobs').selectAll().where('id', '=', id);
    return dialect === 'postgres' ? query.forUpdate() : query;
  });
  const removeJob = compiledOnce((db: Db, id: number) => db.deleteFrom('scoring_jobs').where('id', '=', id));
  // What a scoring is written over: compared before an inline write, so that a result read
  // before another write of the row committed never replaces that write.
  const scoreVersion = compiledOnce((db: Db, scorerId: number, address: string) =>
    db
      .selectFrom('scores')
      .select(['event_id', 'last_score_timestamp', 'status', 'score', 'passing', 'threshold', 'evidence', 'error', 'stamps', 'raw_score', 'stamp_scores', 'expiration_date'])
      .where('scorer_id', '=', scorerId)
      .where('address', '=', address),
  );
  // The row an inline scoring writes over, under its lock: its version, what recordScoring compares
  // the result with (see unchangedSince), and whether a job of the address exists, in one statement.
  const scoreUnderLock = compiledOnce((db: Db, scorerId: number, address: string) => {
    const query = db
      .selectFrom('scores')
      .select(['event_id', 'last_score_timestamp', 'status', 'score', 'passing', 'threshold', 'evidence', 'error', 'stamps'])
      .select((eb) =>
        eb.selectFrom('scoring_jobs').select('scoring_jobs.id').where('scoring_jobs.scorer_id', '=', scorerId).where('scoring_jobs.address', '=', address).as('job_id'),
      )
      .where('scorer_id', '=', scorerId)
      .where('address', '=', address);
    return dialect === 'postgres' ? query.forUpdate('scores') : query;
  });
  const versionText = (row: { event_id?: number | null; last_score_timestamp: number | null; status: string } | undefined) =>
    row ? `${row.event_id ?? null}|${row.last_score_timestamp}|${row.status}` : 'none';
  const jobOf = compiledOnce((db: Db, scorerId: number, address: string) =>
    db.selectFrom('scoring_jobs').select('id').where('scorer_id', '=', scorerId).where('address', '=', address),
  );
  async function enqueue(scorerId: number, address: string, now: number): Promise<void> {
    await writeTransaction(database, async (trx) => {
      // The job row is locked before the score row, in the same order as completion and failure,
      // so that a submission racing a completion waits instead of deadlocking.
      await queueJob(trx, scorerId, address, now);
      await records.markProcessing(trx, scorerId, address, now);
    });
  }

  return {
    /**
     * Records a submission: the score row goes to PROCESSING and the job is
     * queued, or, when one is already queued or running, its generation is
     * bumped so that concurrent submissions share it.
     */
    enqueue,

    /**
     * Records a submission scored in the submitting process, in one write transaction, with no job
     * row. The score row is locked (or, when there is none yet, written) before the queue is
     * looked at: a job of the address committed by then (queued, or running since before this
     * submission) means this result must not be the last word, so the transaction is rolled back
     * and the submission joins the job exactly as `enqueue` does (generation bumped, row
     * PROCESSING). A submission queued later waits for the score row's lock (PostgreSQL) or the
     * write lock (SQLite) and comes after this one. Throws NullifierTaken (nothing written) when another address took a counted nullifier.
     */
    async recordInline(scorerId: number, address: string, now: number, outcome: ScoringOutcome, readOver: ScoreVersion): Promise<InlineRecording> {
      // The common re-score: a result equal to the row it was scored over, with every hold held.
      const refreshed = unchangedRefresh(outcome, readOver.row, scorerId, address, now);
      if (refreshed && readOver.row) {
        const version = readOver.row;
        const written = await writeStatement(database, (db) => records.refreshOverVersion(db, scorerId, address, now, refreshed, version));
        if (Number(written.numAffectedRows ?? 0) === 1) return { kind: 'recorded', recorded: { row: refreshed, appendedEventId: null } };
        // Written over since, or a job exists: the locked path below tells which.
      }
      try {
        return await writeTransaction(database, async (trx) => {
          const current = (await scoreUnderLock(trx, scorerId, address)).rows[0];
          // Another write of the row committed since this scoring began (a concurrent inline
          // scoring of the same address, here or in another process): joining the queue lets a
          // job score from what is stored now, as concurrent submissions always coalesced.
          if (versionText(current) !== readOver.text) throw new JoinJob();
          // With the row locked, a job committed later cannot have marked it PROCESSING yet, so
          // looking at the queue now is as good as after the write. Without a row there is nothing
          // to lock: the queue is looked at once the write has taken the row.
          if (current?.job_id != null) throw new JoinJob();
          const recorded = await records.recordScoring(trx, scorerId, address, { status: 'DONE', outcome }, now, { previous: current });
          if (!current && (await jobOf(trx, scorerId, address)).rows.length > 0) throw new JoinJob();
          return { kind: 'recorded' as const, recorded };
        });
      } catch (error) {
        if (!(error instanceof JoinJob)) throw error;
        await enqueue(scorerId, address, now);
        return { kind: 'queued' };
      }
    },

    /** The score row's version as an inline scoring starts (handed back to `recordInline`). */
    async scoreVersion(scorerId: number, address: string): Promise<ScoreVersion> {
      const row = (await scoreVersion(db, scorerId, address)).rows[0];
      return { text: versionText(row), row };
    },

    /** Takes the next due job (queued, or running with an expired lease) under a lease. */
    async claimNext(owner: string, now: number, leaseMs: number): Promise<ScoringJobRow | undefined> {
      return (await claimDueJob(db, now, owner, now + leaseMs)).rows[0];
    },

    /**
     * Finishes a claimed job: records the scoring (nullifier holds, score row, event; see
     * recordScoring), then removes the job. The outcome is dropped and the job
     * runs again when a newer submission arrived meanwhile or another address
     * took one of the nullifiers first; it is dropped silently when the lease
     * was lost to another worker.
     */
    async complete(job: ScoringJobRow, owner: string, now: number, outcome: ScoringOutcome): Promise<'done' | 'rerun' | 'lost'> {
      try {
        return await writeTransaction(database, async (trx) => {
          const current = await lockJob(trx, job.id);
          if (!current || current.lease_owner !== owner || current.state !== 'running') return 'lost';
          if (current.generation !== current.claimed_generation) throw new RunAgain();
          try {
            await records.recordScoring(trx, job.scorer_id, job.address, { status: 'DONE', outcome }, now);
          } catch (error) {
            if (error instanceof NullifierTaken) throw new RunAgain();
            throw error;
          }
          await removeJob(trx, job.id);
          return 'done' as const;
        });
      } catch (error) {
        if (!(error instanceof RunAgain)) throw error;
        await db
          .updateTable('scoring_jobs')
          .set({ state: 'queued', lease_owner: null, lease_expires_at: null, run_after: now })
          .where('id', '=', job.id)
          .where('lease_owner', '=', owner)
          .execute();
        return 'rerun';
      }
    },

    /**
     * Records a failed attempt: retried later (`rerun`), or given up with the score row at ERROR
     * (`error`); `lost` when another worker had taken the job over meanwhile.
     */
    async fail(job: ScoringJobRow, owner: string, now: number, error: string, retryAt: number | null): Promise<'rerun' | 'error' | 'lost'> {
      return writeTransaction(database, async (trx) => {
        const current = await lockJob(trx, job.id);
        if (!current || current.lease_owner !== owner) return 'lost';
        if (current.generation !== current.claimed_generation) {
          // A newer submission arrived during this attempt: it deserves fresh attempts of its own.
          await trx
            .updateTable('scoring_jobs')
            .set({ state: 'queued', lease_owner: null, lease_expires_at: null, run_after: now, attempts: 0, last_error: error })
            .where('id', '=', job.id)
            .execute();
          return 'rerun';
        }
        if (retryAt !== null) {
          await trx
            .updateTable('scoring_jobs')
            .set({ state: 'queued', lease_owner: null, lease_expires_at: null, run_after: retryAt, last_error: error })
            .where('id', '=', job.id)
            .execute();
          return 'rerun';
        }
        await records.recordScoring(trx, job.scorer_id, job.address, { status: 'ERROR', error, threshold: null }, now);
        await trx.deleteFrom('scoring_jobs').where('id', '=', job.id).execute();
        return 'error';
      });
    },

    /**
     * Gives a claimed job back without spending its attempt, for another worker to take at
     * `runAfter` (now by default: graceful shutdown; later after a database fault).
     */
    async release(job: ScoringJobRow, owner: string, now: number, runAfter = now): Promise<void> {
      await db
        .updateTable('scoring_jobs')
        .set((eb) => ({ state: 'queued', lease_owner: null, lease_expires_at: null, run_after: runAfter, attempts: eb('attempts', '-', 1) }))
        .where('id', '=', job.id)
        .where('lease_owner', '=', owner)
        .execute();
    },

    /**
     * Heartbeat of a long run: moves the lease of a job this owner still holds to
     * `now + leaseMs`. False when the owner no longer holds it (its lease ran out
     * and another worker took the job, or it settled): the run's outcome will be `lost`.
     */
    async renewLease(job: ScoringJobRow, owner: string, now: number, leaseMs: number): Promise<boolean> {
      const result = await db
        .updateTable('scoring_jobs')
        .set({ lease_expires_at: now + leaseMs })
        .where('id', '=', job.id)
        .where('lease_owner', '=', owner)
        .where('state', '=', 'running')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Jobs a worker would take now: queued and due, or running on an expired lease. */
    async dueJobs(now: number): Promise<number> {
      const row = await db
        .selectFrom('scoring_jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where((eb) =>
          eb.or([
            eb.and([eb('state', '=', 'queued'), eb('run_after', '<=', now)]),
            eb.and([eb('state', '=', 'running'), eb('lease_expires_at', '<', now)]),
          ]),
        )
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async queueDepth(): Promise<number> {
      const row = await db.selectFrom('scoring_jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };

  async function lockJob(trx: Db, id: number) {
    return (await jobForUpdate(trx, id)).rows[0];
  }
}

export type ScoringJobsRepository = ReturnType<typeof scoringJobsRepository>;

