/**
 * Submissions scored in the submitting process: one write transaction and no job row
 * when the worker has a free slot; the same result as a queued job; the durable queue when there
 * is no slot, no running worker, a zero wait budget or a job of the address already; and a wait
 * for a queued job that does not poll when a notice of it can arrive.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScoringJobRow } from '../../../src/scoring/jobs/scoring-jobs.repository.js';
import type { ScoringOutcome } from '../../../src/scoring/records/score-outcome.js';
import { ScoringWorker } from '../../../src/scoring/jobs/scoring-worker.js';
import { scoreService } from '../../../src/scoring/scores/scores.service.js';
import { scoresRepository } from '../../../src/scoring/scores/scores.repository.js';
import { createTestApp, seedAccount, startWorkerSettled, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { statementsOf } from '../../helpers/statement-log.js';
import { giveStamps } from '../../helpers/stamps.js';

const isWrite = (sql: string) => /^(insert|update|delete)\b/.test(sql) || /^with\b[\s\S]*\b(insert|update|delete)\b/.test(sql);
const isBegin = (sql: string) => sql === 'begin' || sql === 'begin immediate' || sql === 'start transaction read write';

// ---------------------------------------------------------------------------

const randomAddress = () => `0x${randomBytes(20).toString('hex')}`;
const fixedOutcome: ScoringOutcome = { score: '1.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [] };

describe.each(databaseKinds)('inline scoring of submissions on %s', (kind) => {
  let t: TestApp;
  const workers: ScoringWorker[] = [];
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    await t?.close();
  });

  async function jobRows() {
    return t.ctx.database.db.selectFrom('scoring_jobs').selectAll().execute();
  }

  it('records a submission in one write transaction, with no job row, when the worker has a free slot', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
    // The worker's own looks for jobs are not the submission's: none may land among its statements.
    await startWorkerSettled(t.ctx);
    const { scorer } = await seedAccount(t.ctx, { type: 'binary' });
    const address = randomAddress();
    await giveStamps(t.ctx, address, ['Google', 'Discord', { provider: 'Linkedin', nullifiers: ['v1:shared-li'] }]);

    for (const round of ['first', 're-submission']) {
      const { result, statements } = await statementsOf(() => t.ctx.scores.submit(scorer.id, address));
      expect(result, round).toMatchObject({ status: 'DONE', score: '0.00000', stamp_scores: { Discord: '0.51600', Google: '0.52500', Linkedin: '1.53100' } });
      if (round === 're-submission') {
        // The same result with every hold held: one conditional update of the row's timestamp alone
        // (its other columns are stored already), which PostgreSQL runs alone and SQLite in an
        // immediate transaction.
        const writes = statements.filter(isWrite);
        expect(writes, round).toHaveLength(1);
        expect(writes[0], round).toMatch(/^update "scores" set "last_score_timestamp" = \S+ where/);
        // The conditional update of the one-statement path, not the locked path's refresh.
        expect(writes[0], round).toMatch(/"event_id" = .* not exists/);
        expect(statements.filter(isBegin), round).toHaveLength(kind === 'sqlite' ? 1 : 0);
        continue;
      }
      const begins = statements.filter(isBegin);
      expect(begins, round).toHaveLength(1);
      const begin = statements.findIndex(isBegin);
      const commit = statements.indexOf('commit');
      expect(commit, round).toBeGreaterThan(begin);
      // Every write is inside that one transaction, and none touches the job queue.
      statements.forEach((sql, index) => {
        if (isWrite(sql)) expect(index > begin && index < commit, `${round}: ${sql}`).toBe(true);
      });
      expect(statements.filter((sql) => isWrite(sql) && sql.includes('scoring_jobs')), round).toEqual([]);
    }
    expect(await jobRows()).toEqual([]);
    // The first scoring appended one event; the re-submission with the same result appended none.
    const events = await t.ctx.database.db.selectFrom('score_events').select(['status', 'score']).where('address', '=', address).execute();
    expect(events).toEqual([{ status: 'DONE', score: '0.00000' }]);
  });

  it('gives the same record, score row and events inline as a queued job does', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
    // The worker's own looks for jobs are not the submission's: none may land among its statements.
    await startWorkerSettled(t.ctx);
    const { scorer } = await seedAccount(t.ctx, { type: 'binary' });
    const [address, holder] = [randomAddress(), randomAddress()];
    // The holder takes the shared nullifier first: the address's Linkedin stamp is deduplicated.
    await giveStamps(t.ctx, holder, [{ provider: 'Linkedin', nullifiers: ['v1:shared'] }]);
    expect((await t.ctx.scores.submit(scorer.id, holder)).status).toBe('DONE');
    await giveStamps(t.ctx, address, ['Google', { provider: 'Discord', expiresInMs: 5 * 86_400_000 }, { provider: 'Linkedin', nullifiers: ['v1:shared'] }]);

    const columns = ['score', 'status', 'raw_score', 'passing', 'threshold', 'evidence', 'stamp_scores', 'stamps', 'expiration_date', 'error', 'event_id'] as const;
    const stored = () => t.ctx.database.db.selectFrom('scores').select(columns).where('scorer_id', '=', scorer.id).where('address', '=', address).executeTakeFirstOrThrow();

    const inline = await t.ctx.scores.submit(scorer.id, address);
    const inlineRow = await stored();
    expect(inline).toMatchObject({ status: 'DONE', stamp_scores: { Discord: '0.51600', Google: '0.52500' } });

    // The same submission through the queue: a service without inline scoring, the same worker.
    const queuedOnly = scoreService(scoresRepository(t.ctx.database.db), t.ctx.jobs, t.ctx.worker, { submitWaitMs: 20_000, waitPollMs: 50 });
    const started = once(t.ctx.worker, 'started');
    const queued = await queuedOnly.submit(scorer.id, address);
    expect(((await started)[0] as ScoringJobRow).address).toBe(address);
    const queuedRow = await stored();

    const { last_score_timestamp: inlineAt, ...inlineRest } = inline;
    const { last_score_timestamp: queuedAt, ...queuedRest } = queued;
    expect(queuedRest).toEqual(inlineRest);
    expect(queuedAt >= inlineAt).toBe(true);
    // Same tracked result: the queued scoring appended no event and points at the inline one.
    expect(queuedRow).toEqual(inlineRow);
    expect(await jobRows()).toEqual([]);
  });

  it('queues the submission when every slot of the worker is taken, and answers when the job is done', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000', SCORING_CONCURRENCY: '1' });
    t.ctx.worker.start();
    const { scorer } = await seedAccount(t.ctx);
    const address = randomAddress();
    await giveStamps(t.ctx, address, ['Google']);
    let release!: () => void;
    const hold = () => new Promise<void>((resolve) => (release = resolve));
    // The worker's first look for jobs (at start) holds the slot until it comes back empty.
    let slotTaken = t.ctx.worker.runInline(hold);
    for (let i = 0; i < 100 && !slotTaken; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      slotTaken = t.ctx.worker.runInline(hold);
    }
    expect(slotTaken).not.toBeNull();
    expect(t.ctx.worker.runInline(async () => {})).toBeNull();

    const answer = t.ctx.scores.submit(scorer.id, address);
    // The submission is recorded as a job while the slot stays taken.
    let jobs: Awaited<ReturnType<typeof jobRows>> = [];
    for (let i = 0; i < 200 && jobs.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      jobs = await jobRows();
    }
    expect(jobs).toMatchObject([{ scorer_id: scorer.id, address, state: 'queued' }]);
    release();
    await slotTaken;
    expect(await answer).toMatchObject({ status: 'DONE', score: '0.52500' });
    expect(await jobRows()).toEqual([]);
  });

  it('queues the submission when no worker runs here (serve --no-worker) or the wait budget is zero', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '100' });
    const { scorer } = await seedAccount(t.ctx);
    const [first, second] = [randomAddress(), randomAddress()];
    await giveStamps(t.ctx, first, ['Google']);
    expect(await t.ctx.scores.submit(scorer.id, first)).toMatchObject({ status: 'PROCESSING', score: null });
    expect(await jobRows()).toMatchObject([{ address: first, state: 'queued' }]);

    await t.close();
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '0', SCORING_POLL_MS: '60000' });
    t.ctx.worker.start();
    const seeded = await seedAccount(t.ctx);
    await giveStamps(t.ctx, second, ['Google']);
    // A zero budget asks for PROCESSING at once: the job is scored by the worker afterwards.
    const started = once(t.ctx.worker, 'started');
    const settled = once(t.ctx.worker, 'settled');
    expect(await t.ctx.scores.submit(seeded.scorer.id, second)).toMatchObject({ status: 'PROCESSING', score: null });
    expect(((await started)[0] as ScoringJobRow).address).toBe(second);
    await settled;
    expect((await t.ctx.scores.getScore(seeded.scorer.id, seeded.account.id, second)).status).toBe('DONE');
  });

  it('joins a job of the address that is already queued: the job runs once more and its result is the answer', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
    const { scorer } = await seedAccount(t.ctx);
    const address = randomAddress();
    await giveStamps(t.ctx, address, ['Google']);
    // Queued by another process (no notice reaches this worker before it starts).
    await t.ctx.jobs.enqueue(scorer.id, address, Date.now());
    t.ctx.worker.start();
    const starts: ScoringJobRow[] = [];
    t.ctx.worker.on('started', (job: ScoringJobRow) => starts.push(job));
    const record = await t.ctx.scores.submit(scorer.id, address);
    expect(record).toMatchObject({ status: 'DONE', score: '0.52500' });
    // Either the worker had claimed the job before the submission (which then bumped its
    // generation, so it ran again) or the submission found it queued and bumped it: a job ran.
    expect(starts.length).toBeGreaterThan(0);
    expect(starts.every((job) => job.address === address)).toBe(true);
    expect(await jobRows()).toEqual([]);
  });

  it('rolls an inline recording back and joins the job when one of the address is queued or running', async () => {
    t = await createTestApp(kind);
    const { scorer } = await seedAccount(t.ctx);
    const address = randomAddress();
    await t.ctx.jobs.enqueue(scorer.id, address, Date.now());
    const claimed = await t.ctx.jobs.claimNext('elsewhere', Date.now(), 30_000);
    expect(claimed?.address).toBe(address);
    const outcome: ScoringOutcome = { ...fixedOutcome, claims: [{ nullifier: 'v1:joined', expiresAt: Date.now() + 86_400_000 }] };
    const version = await t.ctx.jobs.scoreVersion(scorer.id, address);
    expect(await t.ctx.jobs.recordInline(scorer.id, address, Date.now(), outcome, version)).toEqual({ kind: 'queued' });
    // Nothing of the inline result stays: no hold, no event, the row PROCESSING; the job runs again.
    const row = await t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', address).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'PROCESSING', score: null });
    expect(await t.ctx.database.db.selectFrom('nullifier_holds').selectAll().where('nullifier', '=', 'v1:joined').execute()).toEqual([]);
    expect(await t.ctx.database.db.selectFrom('score_events').selectAll().where('address', '=', address).execute()).toEqual([]);
    expect(await jobRows()).toMatchObject([{ address, generation: 2, state: 'running' }]);
    expect(await t.ctx.jobs.complete(claimed!, 'elsewhere', Date.now(), fixedOutcome)).toBe('rerun');
  });

  it('never writes a result over a write of the row that committed after it began (a concurrent inline scoring): it joins the queue', async () => {
    t = await createTestApp(kind);
    const { scorer } = await seedAccount(t.ctx);
    const address = randomAddress();
    // S1 starts: it notes the row's version, then (slowly) scores.
    const s1Version = await t.ctx.jobs.scoreVersion(scorer.id, address);
    // S2 starts later, scores newer stamps and commits first.
    const newer: ScoringOutcome = { ...fixedOutcome, score: '2.00000' };
    const s2 = await t.ctx.jobs.recordInline(scorer.id, address, Date.now(), newer, await t.ctx.jobs.scoreVersion(scorer.id, address));
    expect(s2.kind).toBe('recorded');
    // S1's older result is not written: it joins the queue, whose job scores what is stored now.
    const older: ScoringOutcome = { ...fixedOutcome, score: '1.00000' };
    expect(await t.ctx.jobs.recordInline(scorer.id, address, Date.now(), older, s1Version)).toEqual({ kind: 'queued' });
    const events = await t.ctx.database.db.selectFrom('score_events').select('score').where('address', '=', address).execute();
    expect(events.map((e) => e.score)).toEqual(['2.00000']);
    expect(await jobRows()).toMatchObject([{ address, state: 'queued' }]);
  });

  it('refreshes an unchanged result in one statement only while the row is the version it read and no job of the address exists', async () => {
    t = await createTestApp(kind);
    const { scorer } = await seedAccount(t.ctx);
    const expiresAt = Date.now() + 86_400_000;
    const scored: ScoringOutcome = { ...fixedOutcome, claims: [{ nullifier: 'v1:refresh', expiresAt }] };
    const unchanged: ScoringOutcome = { ...fixedOutcome, claims: [{ nullifier: 'v1:refresh', expiresAt, heldAlready: true }] };
    const row = (address: string) => t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', address).executeTakeFirstOrThrow();
    const address = randomAddress();
    expect((await t.ctx.jobs.recordInline(scorer.id, address, 1_000, scored, await t.ctx.jobs.scoreVersion(scorer.id, address))).kind).toBe('recorded');

    // Two scorings start over the same version; the first records the same result, and moves the version.
    const read = await t.ctx.jobs.scoreVersion(scorer.id, address);
    const first = await statementsOf(() => t.ctx.jobs.recordInline(scorer.id, address, 2_000, unchanged, read));
    expect(first.result).toMatchObject({ kind: 'recorded', recorded: { appendedEventId: null, row: { last_score_timestamp: 2_000, status: 'DONE' } } });
    expect(first.statements.filter(isWrite)).toHaveLength(1);
    expect(first.statements.filter(isWrite)[0]).toMatch(/"event_id" = .* not exists/);
    expect(await row(address)).toMatchObject({ last_score_timestamp: 2_000, status: 'DONE' });
    // The second, over the version it read, writes nothing of its own and joins the queue.
    expect(await t.ctx.jobs.recordInline(scorer.id, address, 3_000, unchanged, read)).toEqual({ kind: 'queued' });
    expect(await row(address)).toMatchObject({ last_score_timestamp: 3_000, status: 'PROCESSING' });
    expect(await jobRows()).toMatchObject([{ address, state: 'queued' }]);

    // A job of the address (queued or running) also keeps the refresh from being written.
    const other = randomAddress();
    const otherScored: ScoringOutcome = { ...scored, claims: [{ nullifier: 'v1:refresh-other', expiresAt }] };
    const otherUnchanged: ScoringOutcome = { ...unchanged, claims: [{ nullifier: 'v1:refresh-other', expiresAt, heldAlready: true }] };
    expect((await t.ctx.jobs.recordInline(scorer.id, other, 1_000, otherScored, await t.ctx.jobs.scoreVersion(scorer.id, other))).kind).toBe('recorded');
    const otherRead = await t.ctx.jobs.scoreVersion(scorer.id, other);
    await t.ctx.database.db
      .insertInto('scoring_jobs')
      .values({ scorer_id: scorer.id, address: other, state: 'running', generation: 1, claimed_generation: 1, attempts: 1, run_after: 0, lease_owner: 'elsewhere', lease_expires_at: Date.now() + 30_000, last_error: null, created_at: 0 })
      .execute();
    expect(await t.ctx.jobs.recordInline(scorer.id, other, 2_000, otherUnchanged, otherRead)).toEqual({ kind: 'queued' });
    expect(await row(other)).toMatchObject({ status: 'PROCESSING' });
    expect(await t.ctx.database.db.selectFrom('score_events').select('address').where('address', '=', other).execute()).toHaveLength(1);
  });

  it('writes only the timestamp of a refresh whose untracked columns are stored already, and all of them otherwise', async () => {
    t = await createTestApp(kind);
    const { scorer } = await seedAccount(t.ctx);
    const address = randomAddress();
    const firstExpiry = Date.now() + 86_400_000;
    const scored: ScoringOutcome = { ...fixedOutcome, expirationDate: firstExpiry, stampScores: '{"a":"1.00000"}', rawScore: '1.00000' };
    const row = () => t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', address).executeTakeFirstOrThrow();
    const refresh = async (outcome: ScoringOutcome, now: number) => {
      const { result, statements } = await statementsOf(async () => t.ctx.jobs.recordInline(scorer.id, address, now, outcome, await t.ctx.jobs.scoreVersion(scorer.id, address)));
      expect(result).toMatchObject({ kind: 'recorded', recorded: { appendedEventId: null } });
      const writes = statements.filter(isWrite);
      expect(writes).toHaveLength(1);
      // The answer is the row as stored, whichever statement wrote it.
      expect(result).toEqual({ kind: 'recorded', recorded: { row: await row(), appendedEventId: null } });
      return writes[0] as string;
    };
    expect((await t.ctx.jobs.recordInline(scorer.id, address, 1_000, scored, await t.ctx.jobs.scoreVersion(scorer.id, address))).kind).toBe('recorded');

    // The same result again: the timestamp only (the expiration-date index is left alone).
    const touch = await refresh(scored, 2_000);
    expect(touch).toMatch(/^update "scores" set "last_score_timestamp" = \S+ where/);
    expect(touch).not.toContain('expiration_date');
    expect(await row()).toMatchObject({ last_score_timestamp: 2_000, expiration_date: firstExpiry, stamp_scores: '{"a":"1.00000"}', raw_score: '1.00000' });

    // The log's columns equal but not the expiry, the per-stamp scores or the raw score: each is written.
    const secondExpiry = firstExpiry + 3_600_000;
    let now = 3_000;
    for (const [changed, expected] of [
      [{ expirationDate: secondExpiry }, { expiration_date: secondExpiry }],
      [{ stampScores: '{"a":"1.00001"}' }, { stamp_scores: '{"a":"1.00001"}' }],
      [{ rawScore: '1.00001' }, { raw_score: '1.00001' }],
    ] as const) {
      // From the second round on, the expiry stays the second one: only `changed` differs.
      const outcome: ScoringOutcome = Object.assign({ ...scored, expirationDate: secondExpiry }, changed);
      const write = await refresh(outcome, (now += 1_000));
      expect(write).toContain('"expiration_date" = ');
      expect(await row()).toMatchObject(expected);
      Object.assign(scored, outcome);
    }
    expect(await t.ctx.database.db.selectFrom('score_events').select('id').where('address', '=', address).execute()).toHaveLength(1);
  });

  it('refreshes an unchanged result that must write a hold under the row lock, and answers the row as stored', async () => {
    t = await createTestApp(kind);
    const { scorer } = await seedAccount(t.ctx);
    const address = randomAddress();
    const expiresAt = Date.now() + 86_400_000;
    const scored: ScoringOutcome = { ...fixedOutcome, claims: [{ nullifier: 'v1:rehold', expiresAt }] };
    expect((await t.ctx.jobs.recordInline(scorer.id, address, 1_000, scored, await t.ctx.jobs.scoreVersion(scorer.id, address))).kind).toBe('recorded');
    // The hold is gone (written by hand): the same result now has a hold to write, so it takes the
    // locked path, whose recordScoring sees the result unchanged and refreshes the row.
    await t.ctx.database.db.deleteFrom('nullifier_holds').where('nullifier', '=', 'v1:rehold').execute();
    const version = await t.ctx.jobs.scoreVersion(scorer.id, address);
    const again = await statementsOf(() => t.ctx.jobs.recordInline(scorer.id, address, 2_000, scored, version));
    expect(again.statements.some((sql) => sql.startsWith('insert into "nullifier_holds"'))).toBe(true);
    const refresh = again.statements.filter((sql) => sql.startsWith('update "scores"'));
    expect(refresh).toHaveLength(1);
    expect(refresh[0]).not.toContain('not exists');
    expect(again.statements.some((sql) => sql.startsWith('insert into "scores"') || sql.startsWith('insert into "score_events"'))).toBe(false);
    const stored = await t.ctx.database.db.selectFrom('scores').selectAll().where('address', '=', address).executeTakeFirstOrThrow();
    expect(again.result).toEqual({ kind: 'recorded', recorded: { row: stored, appendedEventId: null } });
    expect(stored).toMatchObject({ last_score_timestamp: 2_000, status: 'DONE' });
    expect(typeof stored.event_id).toBe('number');
  });

  describe('waiting for a queued job', () => {
    /** A scoring service without inline scoring, whose every look at the score row is counted. */
    function countingService(worker: ScoringWorker | null, noticesFromEveryProcess = false, settledJobs?: EventEmitter) {
      const repository = scoresRepository(t.ctx.database.db);
      const reads = { count: 0 };
      const counted = { ...repository, find: (...args: Parameters<typeof repository.find>) => (reads.count++, repository.find(...args)) };
      const service = scoreService(counted, t.ctx.jobs, worker, {
        submitWaitMs: 20_000,
        waitPollMs: 5,
        noticesFromEveryProcess: () => noticesFromEveryProcess,
        ...(settledJobs ? { settledJobs } : {}),
      });
      return { service, reads };
    }

    it('does not poll while the local worker runs the job: it reads on the settled notice', async () => {
      t = await createTestApp(kind);
      const { scorer } = await seedAccount(t.ctx);
      let finish!: () => void;
      const scoring = new Promise<void>((resolve) => (finish = resolve));
      const worker = new ScoringWorker(t.ctx.jobs, async () => (await scoring, fixedOutcome), { concurrency: 1, leaseMs: 30_000, pollMs: 60_000, maxAttempts: 3, backoffBaseMs: 10 });
      workers.push(worker);
      worker.start();
      const { service, reads } = countingService(worker);
      const started = once(worker, 'started');
      const answer = service.submit(scorer.id, randomAddress());
      await started;
      // Until the claim, the wait polls (every 5 ms: how many times depends on the machine's load).
      const readsAtStart = reads.count;
      // Forty poll intervals pass while the job runs.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const readsWhileRunning = reads.count - readsAtStart;
      finish();
      expect(await answer).toMatchObject({ status: 'DONE', score: '1.00000' });
      // At most the one poll already under way when the worker reported the start.
      expect(readsWhileRunning).toBeLessThanOrEqual(1);
      expect(reads.count).toBe(readsAtStart + readsWhileRunning + 1);
    });

    it('polls only when no notice can arrive, and not at all once every process announces settled jobs', async () => {
      t = await createTestApp(kind);
      const { scorer } = await seedAccount(t.ctx);
      // No worker here: another process takes the job and announces nothing (SQLite, no LISTEN).
      for (const everyProcess of [false, true]) {
        const notices = new EventEmitter();
        const { service, reads } = countingService(null, everyProcess, notices);
        const address = randomAddress();
        const answer = service.submit(scorer.id, address);
        await new Promise((resolve) => setTimeout(resolve, 200));
        const job = await t.ctx.jobs.claimNext('elsewhere', Date.now(), 30_000);
        expect(job?.address).toBe(address);
        expect(await t.ctx.jobs.complete(job!, 'elsewhere', Date.now(), fixedOutcome)).toBe('done');
        if (everyProcess) {
          // Only the read after enqueueing; the next is the one the notice asks for.
          expect(reads.count).toBe(1);
          notices.emit('settled', { scorerId: scorer.id, address });
          expect(await answer).toMatchObject({ status: 'DONE', score: '1.00000' });
          expect(reads.count).toBe(2);
        } else {
          // Nothing is announced: the answer comes from polling.
          expect(await answer).toMatchObject({ status: 'DONE', score: '1.00000' });
          expect(reads.count).toBeGreaterThan(3);
        }
      }
    });
  });
});
