/**
 * Several scoring workers on one database: never two scorings of one (scorer, address) at once,
 * and concurrent submissions of one address coalesced into one job and one run.
 *
 * A second AppContext in a worker thread, with its own connection(s) to the same database and data
 * directory, stands in for a second process (test/helpers/scoring-peer.ts). Stamps are real
 * credentials of the development issuer.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/connection.js';
import type { ScoringOutcome } from '../../../src/scoring/records/score-outcome.js';
import type { ScoreRecord } from '../../../src/scoring/scores/scores.service.js';
import { seedAccount } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { usePeerThread } from '../../helpers/scoring-peer.js';
import { randomAddress, giveStamps, expectedScore, keyOf, Recorder, until, deferred, scoreRow, jobRows, testWorker, day, type Run, scoringQueueHarness } from '../../helpers/scoring-queue.js';

usePeerThread();

describe.each(databaseKinds)('scoring workers on %s', (kind) => {
  const { setUp, current, openPeer, track, onCleanup } = scoringQueueHarness(kind);

  describe('two workers on one database', () => {
    // 30 s rather than the usual 20 s: it takes 3 to 6 s, more on a machine busy with other test runs.
    it('never score the same (scorer, address) twice at once, and every submission ends DONE with its score', { timeout: 30_000 }, async () => {
      const { ctx } = await setUp({ SCORING_CONCURRENCY: '3' });
      const { scorer } = await seedAccount(ctx);
      const providers = ['Google', 'Discord', 'Linkedin', 'Ens', 'Lens', 'GnosisSafe', 'NFT'];
      const addresses = Array.from({ length: 20 }, () => randomAddress());
      const stampsOf = (i: number) => providers.slice(0, 1 + (i % providers.length));
      for (const [i, address] of addresses.entries()) await giveStamps(ctx, address, stampsOf(i));

      // One worker in each process, each three jobs at a time, both timing their scorings.
      const peer = await openPeer({ env: { SCORING_CONCURRENCY: '3' }, instrument: true });
      const local = track(testWorker(ctx));
      expect(ctx.config.scoringConcurrency).toBe(3);
      const recorder = new Recorder().watch(local, 'first').watch(peer, 'second');
      local.start();
      await peer.start();

      // 2 to 5 submissions per address (70 in all), through both processes, spread over ~150 ms so
      // that some arrive together and some while the address is being scored.
      const submissions: Promise<ScoreRecord>[] = [];
      for (const [i, address] of addresses.entries()) {
        for (let n = 0; n < 2 + (i % 4); n += 1) {
          const submit = (i + n) % 2 === 0 ? () => ctx.scores.submit(scorer.id, address) : () => peer.submit(scorer.id, address);
          submissions.push(sleep(Math.floor(Math.random() * 150)).then(submit));
        }
      }
      expect(submissions.length).toBeGreaterThanOrEqual(60);
      const answers = await Promise.all(submissions);
      expect(answers.every((a) => a.status === 'PROCESSING' || a.status === 'DONE')).toBe(true);

      await until(
        'the queue to drain',
        async () => {
          const [jobs, pending] = await Promise.all([
            jobRows(ctx),
            ctx.database.db.selectFrom('scores').select('address').where('status', '!=', 'DONE').execute(),
          ]);
          return jobs.length === 0 && pending.length === 0;
        },
        12_000,
      );
      await until('every run to be reported', () => recorder.doneFor(...addresses.map((address) => keyOf(scorer.id, address))));

      expect(recorder.windows.length).toBe(recorder.runs.length);
      expect(recorder.overlaps()).toEqual([]);
      expect(recorder.unmatched).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
      expect(recorder.outcomes().filter((o) => o !== 'done' && o !== 'rerun')).toEqual([]);
      // Both processes did part of the work, and no run happened without a submission asking for it.
      expect(new Set(recorder.runs.map((r) => r.worker))).toEqual(new Set(['first', 'second']));
      expect(recorder.runs.length).toBeLessThanOrEqual(submissions.length);

      const rows = await ctx.database.db.selectFrom('scores').selectAll().where('scorer_id', '=', scorer.id).execute();
      expect(rows).toHaveLength(addresses.length);
      for (const [i, address] of addresses.entries()) {
        const row = rows.find((r) => r.address === address);
        expect(row, address).toMatchObject({ status: 'DONE', score: expectedScore(ctx, stampsOf(i)), error: null });
        expect(recorder.outcomes(keyOf(scorer.id, address)), address).toContain('done');
      }
    });
  });

  describe('coalescing', () => {
    it('turns many concurrent submissions of one address into one job and one run', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Discord']);

      const submissions = 25;
      let sampling = true;
      let mostJobs = 0;
      const sampler = (async () => {
        while (sampling) {
          mostJobs = Math.max(mostJobs, (await jobRows(ctx, scorer.id, address)).length);
          await sleep(1);
        }
      })();
      const records = await Promise.all(Array.from({ length: submissions }, () => ctx.scores.submit(scorer.id, address)));
      sampling = false;
      await sampler;

      expect(records.every((r) => r.status === 'PROCESSING')).toBe(true);
      expect(mostJobs).toBeLessThanOrEqual(1);
      expect(await jobRows(ctx, scorer.id, address)).toMatchObject([{ state: 'queued', generation: submissions, attempts: 0 }]);

      const recorder = new Recorder().watch(ctx.worker, 'worker');
      ctx.worker.start();
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');
      await until('the run to settle', () => recorder.allSettled());
      await sleep(100);
      expect(recorder.outcomes()).toEqual(['done']);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ score: expectedScore(ctx, ['Google', 'Discord']) });
      expect(await jobRows(ctx)).toEqual([]);
    });

    it('runs once more when a submission arrives during a run, and the final score has the stamps added meanwhile', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google']);

      const outcomes: ScoringOutcome[] = [];
      const firstScored = deferred();
      let hold = deferred();
      const worker = track(
        testWorker(ctx, {
          afterScoring: (_scorerId, _address, outcome) => {
            if (outcome) outcomes.push(outcome);
            firstScored.resolve();
            return hold.promise;
          },
        }),
      );
      const recorder = new Recorder().watch(worker, 'worker');
      worker.start();

      await ctx.scores.submit(scorer.id, address);
      // The first run has read the stamps and computed its result; it has not recorded it yet.
      await firstScored.promise;
      const [firstRun] = recorder.runs as [Run];
      expect(firstRun.job).toMatchObject({ generation: 1, claimed_generation: 1 });
      expect(outcomes.map((o) => o.score)).toEqual([expectedScore(ctx, ['Google'])]);

      await giveStamps(ctx, address, ['Discord']);
      const during = await ctx.scores.submit(scorer.id, address);
      expect(during.status).toBe('PROCESSING');
      expect(await jobRows(ctx, scorer.id, address)).toMatchObject([
        { id: firstRun.job.id, state: 'running', generation: 2, claimed_generation: 1, lease_owner: worker.owner },
      ]);

      const released = hold;
      hold = { promise: Promise.resolve(), resolve: () => {} };
      released.resolve();
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');
      await until('the runs to settle', () => recorder.allSettled());
      await sleep(100);

      expect(recorder.outcomes()).toEqual(['rerun', 'done']);
      expect(recorder.runs[1]?.job).toMatchObject({ generation: 2, claimed_generation: 2 });
      expect(outcomes.map((o) => o.score)).toEqual([expectedScore(ctx, ['Google']), expectedScore(ctx, ['Google', 'Discord'])]);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google', 'Discord']), error: null });
      expect(await jobRows(ctx)).toEqual([]);
      expect(recorder.overlaps()).toEqual([]);
    });

    it('with a worker running, concurrent submissions share runs and never hold two jobs for one address', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Linkedin', 'Ens']);
      const recorder = new Recorder().watch(ctx.worker, 'worker');
      ctx.worker.start();

      let sampling = true;
      let mostJobs = 0;
      const sampler = (async () => {
        while (sampling) {
          mostJobs = Math.max(mostJobs, (await jobRows(ctx, scorer.id, address)).length);
          await sleep(1);
        }
      })();
      const submissions = 20;
      await Promise.all(Array.from({ length: submissions }, () => ctx.scores.submit(scorer.id, address)));
      await until('the queue to drain', async () => (await jobRows(ctx)).length === 0);
      sampling = false;
      await sampler;
      await until('the runs to settle', () => recorder.allSettled());

      expect(mostJobs).toBeLessThanOrEqual(1);
      expect(recorder.runs.length).toBeGreaterThanOrEqual(1);
      expect(recorder.runs.length).toBeLessThan(submissions);
      expect(recorder.outcomes().at(-1)).toBe('done');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Linkedin', 'Ens']) });
    });

    it('never loses a submission that arrives while its job is being completed', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      const now = Date.now();
      await ctx.jobs.enqueue(scorer.id, address, now);
      const job = await ctx.jobs.claimNext('owner', now, 30_000);
      if (!job) throw new Error('no job claimed');

      // On PostgreSQL, make the interleaving certain: another transaction holds the nullifier the
      // completion needs, so the completion stops half-way (job row locked) while the submission
      // comes in, and goes on once that transaction rolls back. SQLite has a single writer, so
      // the two simply run one after the other there.
      const nullifier = `n-${randomBytes(4).toString('hex')}`;
      let blocker: { done: Promise<void>; release(): void } | null = null;
      let blockerDb: Database | null = null;
      if (kind === 'postgres') {
        blockerDb = current().test.open();
        onCleanup(() => (blockerDb as Database).close());
        const inserted = deferred();
        const release = deferred();
        const done = blockerDb.db
          .transaction()
          .execute(async (trx) => {
            await trx.insertInto('nullifier_holds').values({ scorer_id: scorer.id, nullifier, address: randomAddress(), expires_at: now + day }).execute();
            inserted.resolve();
            await release.promise;
            throw new Error('roll back');
          })
          .catch(() => {});
        await inserted.promise;
        blocker = { done, release: release.resolve };
      }
      const completing = ctx.jobs.complete(job, 'owner', now + 1, { score: '1.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [{ nullifier, expiresAt: now + day }] });
      if (blocker) await sleep(200);
      const submitting = ctx.jobs.enqueue(scorer.id, address, now + 2);
      if (blocker) {
        await sleep(200);
        blocker.release();
        await blocker.done;
      }
      const [completed, submitted] = await Promise.allSettled([completing, submitting]);

      expect(submitted).toEqual({ status: 'fulfilled', value: undefined });
      expect(completed.status).toBe('fulfilled');
      // Whatever the order, the later submission is still to be scored.
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING' });
      expect(await jobRows(ctx, scorer.id, address)).toMatchObject([{ state: 'queued' }]);
    });
  });
});
