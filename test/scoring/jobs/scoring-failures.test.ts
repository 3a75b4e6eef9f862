/**
 * Scoring workers when things go wrong: retries with backoff and ERROR, nullifier deduplication
 * races between two workers and two processes, and graceful stop.
 *
 * A second AppContext in a worker thread, with its own connection(s) to the same database and data
 * directory, stands in for a second process (test/helpers/scoring-peer.ts). Stamps are real
 * credentials of the development issuer.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { seedAccount } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { usePeerThread } from '../../helpers/scoring-peer.js';
import { randomAddress, giveStamps, expectedScore, keyOf, Recorder, until, deferred, scoreRow, jobRows, holdsOf, setWeights, testWorker, type Run, scoringQueueHarness } from '../../helpers/scoring-queue.js';

usePeerThread();

describe.each(databaseKinds)('scoring failures on %s', (kind) => {
  const { setUp, openPeer, track } = scoringQueueHarness(kind);

  describe('retries and ERROR', () => {
    it('retries a failing job with backoff, then sets ERROR with a short sentence; a later good run clears it', async () => {
      const backoffMs = 800;
      const { ctx } = await setUp({ SCORING_MAX_ATTEMPTS: '2', SCORING_BACKOFF_MS: String(backoffMs) });
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Discord']);
      await setWeights(ctx, scorer.id, '{"Google":"abc"}');

      const recorder = new Recorder().watch(ctx.worker, 'worker');
      ctx.worker.start();
      await ctx.scores.submit(scorer.id, address);

      await until('the first attempt to settle', () => recorder.runs[0]?.outcome !== undefined);
      expect(recorder.runs[0]?.outcome).toBe('rerun');
      const [queued] = await jobRows(ctx);
      expect(queued).toMatchObject({ state: 'queued', attempts: 1, lease_owner: null });
      if (!queued) throw new Error('unreachable');
      // Retried later, not at once: the next attempt is due a backoff after the first one.
      expect(queued.run_after).toBeGreaterThanOrEqual((recorder.runs[0] as Run).startedWall + backoffMs);
      expect(queued.last_error).toMatch(/weight/);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING', score: null, error: null });

      await until('the second attempt to settle', () => recorder.runs[1]?.outcome !== undefined, 5000);
      expect(recorder.runs).toHaveLength(2);
      expect(recorder.outcomes()).toEqual(['rerun', 'error']);
      expect((recorder.runs[1] as Run).startedWall).toBeGreaterThanOrEqual(queued.run_after);
      expect((recorder.runs[1] as Run).job.attempts).toBe(2);
      const failed = await scoreRow(ctx, scorer.id, address);
      expect(failed).toMatchObject({ status: 'ERROR', score: null, evidence: null, stamp_scores: '{}', expiration_date: null });
      const error = failed?.error ?? '';
      expect(error).toMatch(/^[A-Z].*\.$/s);
      expect(error.length).toBeLessThanOrEqual(200);
      expect(error).toContain('Google');
      expect(error).not.toMatch(/\n|\s+at |\/work\/|node_modules|select |Error:/);
      expect(await jobRows(ctx)).toEqual([]);
      expect(recorder.failures.length).toBe(2);

      // The operator fixes the scorer and the integrator submits again.
      await setWeights(ctx, scorer.id, '{}');
      await ctx.scores.submit(scorer.id, address);
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({
        status: 'DONE',
        score: expectedScore(ctx, ['Google', 'Discord']),
        error: null,
        expiration_date: expect.any(Number),
      });
      expect(Object.keys(JSON.parse((await scoreRow(ctx, scorer.id, address))?.stamp_scores ?? 'null'))).toEqual(['Discord', 'Google']);
      expect(await jobRows(ctx)).toEqual([]);
    });

    it('does not drop a re-submission that arrives while the last attempt of a failing job is running', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google']);
      await setWeights(ctx, scorer.id, '{"Google":"abc"}');

      const failing = deferred();
      const hold = deferred();
      const worker = track(
        testWorker(
          ctx,
          {
            afterFailure: () => {
              failing.resolve();
              return hold.promise;
            },
          },
          { maxAttempts: 1 },
        ),
      );
      const recorder = new Recorder().watch(worker, 'worker');
      worker.start();
      await ctx.scores.submit(scorer.id, address);
      await failing.promise;

      // While the doomed last attempt is still in hand, the scorer is fixed and the address submitted again.
      await setWeights(ctx, scorer.id, '{}');
      await ctx.scores.submit(scorer.id, address);
      hold.resolve();

      await until('the runs to settle and the queue to drain', async () => recorder.allSettled() && (await jobRows(ctx)).length === 0);
      await until('the score to leave PROCESSING', async () => (await scoreRow(ctx, scorer.id, address))?.status !== 'PROCESSING', 2000);
      // The re-submission came after the fix, so it must be scored: DONE, not the stale attempt's ERROR.
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google']), error: null });
    });
  });

  describe('deduplication races', () => {
    it('gives a shared nullifier to exactly one of two addresses scored at the same moment by two workers', async () => {
      const { ctx } = await setUp();
      const { account, scorer } = await seedAccount(ctx);
      const shared = `shared-${randomBytes(6).toString('hex')}`;
      const [a, b] = [randomAddress(), randomAddress()];
      for (const address of [a, b]) await giveStamps(ctx, address, [{ provider: 'Google', nullifiers: [shared] }, 'Discord']);

      // Each worker takes one job (concurrency 1) and computes its score before either records it.
      const peer = await openPeer({ hold: true, workerOptions: { concurrency: 1 } });
      const peerScored = new Promise<void>((resolve) => peer.once('scored', () => resolve()));
      const localScored = deferred();
      const localGate = deferred();
      let holding = true;
      const local = track(
        testWorker(ctx, {
          afterScoring: async () => {
            if (!holding) return;
            localScored.resolve();
            await localGate.promise;
          },
        }, { concurrency: 1 }),
      );
      const recorder = new Recorder().watch(local, 'first').watch(peer, 'second');
      await ctx.scores.submit(scorer.id, a);
      await peer.submit(scorer.id, b);
      local.start();
      await peer.start();
      await Promise.race([
        Promise.all([localScored.promise, peerScored]),
        sleep(5000).then(() => {
          throw new Error('the two workers did not both score');
        }),
      ]);
      expect(recorder.runs.map((r) => r.worker).sort()).toEqual(['first', 'second']);

      // Both computed with the nullifier unheld. The peer records first; this worker then must not.
      await peer.release();
      await until('the peer’s run to settle', () => recorder.runs.some((r) => r.worker === 'second' && r.outcome !== undefined));
      holding = false;
      localGate.resolve();
      await until(
        'both scores to be DONE',
        async () => (await scoreRow(ctx, scorer.id, a))?.status === 'DONE' && (await scoreRow(ctx, scorer.id, b))?.status === 'DONE',
      );
      await until('the runs to be reported', () => recorder.doneFor(keyOf(scorer.id, a), keyOf(scorer.id, b)));

      const both = expectedScore(ctx, ['Google', 'Discord']);
      const discordOnly = expectedScore(ctx, ['Discord']);
      const winner = recorder.runs.find((r) => r.worker === 'second')?.job.address;
      const loser = winner === a ? b : a;
      // The loser's first result was dropped and it was scored again, seeing the winner's hold.
      expect(recorder.outcomes(keyOf(scorer.id, loser))).toEqual(['rerun', 'done']);
      expect(recorder.outcomes(keyOf(scorer.id, winner ?? ''))).toEqual(['done']);
      expect((await scoreRow(ctx, scorer.id, winner ?? ''))?.score).toBe(both);
      expect((await scoreRow(ctx, scorer.id, loser))?.score).toBe(discordOnly);
      expect(await holdsOf(ctx, scorer.id, shared)).toMatchObject([{ address: winner }]);
      expect(recorder.failureMessages()).toEqual([]);

      // Nothing is shared across scorers: in another scorer the loser gets the points.
      const elsewhere = await ctx.accounts.createScorer(account.id, { name: 'Another scorer' });
      await ctx.scores.submit(elsewhere.id, loser);
      await until('the other scorer’s score to be DONE', async () => (await scoreRow(ctx, elsewhere.id, loser))?.status === 'DONE');
      expect((await scoreRow(ctx, elsewhere.id, loser))?.score).toBe(both);
      expect(await holdsOf(ctx, elsewhere.id, shared)).toMatchObject([{ address: loser }]);
      expect(await holdsOf(ctx, scorer.id, shared)).toMatchObject([{ address: winner }]);
      expect((await scoreRow(ctx, scorer.id, loser))?.score).toBe(discordOnly);
    });

    it('resolves concurrent submissions of pairs sharing a nullifier, through two processes, the same way', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const pairs = Array.from({ length: 4 }, () => ({
        shared: `shared-${randomBytes(6).toString('hex')}`,
        a: randomAddress(),
        b: randomAddress(),
      }));
      for (const { shared, a, b } of pairs) {
        for (const address of [a, b]) await giveStamps(ctx, address, [{ provider: 'Linkedin', nullifiers: [shared] }, 'Google']);
      }
      const peer = await openPeer({ instrument: true });
      const local = track(testWorker(ctx));
      const recorder = new Recorder().watch(local, 'first').watch(peer, 'second');
      local.start();
      await peer.start();

      await Promise.all(pairs.flatMap(({ a, b }) => [ctx.scores.submit(scorer.id, a), peer.submit(scorer.id, b)]));
      await until('every pair to be DONE', async () => {
        const rows = await ctx.database.db.selectFrom('scores').select('status').where('scorer_id', '=', scorer.id).execute();
        return rows.length === 8 && rows.every((r) => r.status === 'DONE');
      });
      await until('the runs to be reported', () =>
        recorder.doneFor(...pairs.flatMap(({ a, b }) => [keyOf(scorer.id, a), keyOf(scorer.id, b)])),
      );

      const both = expectedScore(ctx, ['Google', 'Linkedin']);
      const googleOnly = expectedScore(ctx, ['Google']);
      for (const { shared, a, b } of pairs) {
        const scoreA = (await scoreRow(ctx, scorer.id, a))?.score;
        const scoreB = (await scoreRow(ctx, scorer.id, b))?.score;
        expect([scoreA, scoreB].sort()).toEqual([both, googleOnly].sort());
        expect(await holdsOf(ctx, scorer.id, shared)).toMatchObject([{ address: scoreA === both ? a : b }]);
      }
      expect(recorder.overlaps()).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
    });
  });

  describe('graceful stop', () => {
    it('stop() waits for the job in hand, and a stopped worker takes no more jobs', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const [a, b] = [randomAddress(), randomAddress()];
      await giveStamps(ctx, a, ['Google']);
      await giveStamps(ctx, b, ['Discord']);

      const hold = deferred();
      const worker = track(testWorker(ctx, { afterScoring: () => hold.promise }));
      const recorder = new Recorder().watch(worker, 'worker');
      worker.start();
      await ctx.scores.submit(scorer.id, a);
      await until('the run to start', () => recorder.runs.length === 1);

      let stopped = false;
      const stopping = worker.stop().then(() => {
        stopped = true;
      });
      await sleep(200);
      expect(stopped).toBe(false);
      expect(await scoreRow(ctx, scorer.id, a)).toMatchObject({ status: 'PROCESSING' });

      hold.resolve();
      await stopping;
      // Everything the run does is done by the time stop() resolves.
      expect(recorder.outcomes()).toEqual(['done']);
      expect(await scoreRow(ctx, scorer.id, a)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google']) });
      expect(await jobRows(ctx)).toEqual([]);

      // Stopped: neither a notification nor polling makes it take work.
      await ctx.scores.submit(scorer.id, b);
      worker.notify();
      await sleep(300);
      expect(recorder.runs).toHaveLength(1);
      expect(await jobRows(ctx)).toMatchObject([{ address: b, state: 'queued', lease_owner: null, attempts: 0 }]);
    });

    it('stopped while it is taking a job from the database, a worker runs and holds nothing after stop() resolves', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const addresses = Array.from({ length: 3 }, () => randomAddress());
      for (const address of addresses) await giveStamps(ctx, address, ['Google']);
      const recorder = new Recorder().watch(ctx.worker, 'worker');
      for (const address of addresses) await ctx.scores.submit(scorer.id, address);

      // start() begins a claim at once; stop() comes before that claim has returned.
      ctx.worker.start();
      await ctx.worker.stop();
      const runsAtStop = recorder.runs.length;
      const settledAtStop = recorder.runs.filter((r) => r.outcome !== undefined).length;

      await sleep(300);
      expect(runsAtStop).toBe(settledAtStop);
      expect(recorder.runs).toHaveLength(runsAtStop);
      const jobs = await jobRows(ctx);
      expect(jobs.filter((j) => j.state === 'running')).toEqual([]);
      expect(jobs).toHaveLength(addresses.length - runsAtStop);
    });
  });
});
