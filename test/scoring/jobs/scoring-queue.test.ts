/**
 * The durable scoring queue end to end on a real database: submissions kept as PROCESSING scores
 * and queued jobs until a worker finishes them, write-lock waits, leases and crash recovery.
 *
 * A second AppContext in a worker thread, with its own connection(s) to the same database and data
 * directory, stands in for a second process (test/helpers/scoring-peer.ts). Stamps are real
 * credentials of the development issuer.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { seedAccount } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { usePeerThread } from '../../helpers/scoring-peer.js';
import { randomAddress, giveStamps, expectedScore, keyOf, Recorder, until, scoreRow, jobRows, holdsOf, day, type Run, scoringQueueHarness } from '../../helpers/scoring-queue.js';

usePeerThread();

describe.each(databaseKinds)('scoring queue on %s', (kind) => {
  const { setUp, openPeer } = scoringQueueHarness(kind);

  describe('durable queue', () => {
    it('keeps a submission as a PROCESSING score and a queued job until a worker, even in another process, finishes it', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Discord', 'Linkedin']);

      const record = await ctx.scores.submit(scorer.id, address);
      expect(record).toMatchObject({ address, status: 'PROCESSING', score: null, evidence: null, error: null });

      // Nothing runs it: no worker was started in this process.
      await sleep(300);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING', score: null, error: null });
      const [job, ...others] = await jobRows(ctx);
      expect(others).toEqual([]);
      expect(job).toMatchObject({ scorer_id: scorer.id, address, state: 'queued', generation: 1, attempts: 0, lease_owner: null });

      // A worker of a freshly started process picks it up from the database.
      const second = await openPeer({ env: { SUBMIT_WAIT_MS: '3000' } });
      const recorder = new Recorder().watch(second, 'second');
      await second.start();
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');

      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({
        status: 'DONE',
        score: expectedScore(ctx, ['Google', 'Discord', 'Linkedin']),
        evidence: null,
        error: null,
      });
      expect(await jobRows(ctx)).toEqual([]);
      await until('the run to be reported', () => recorder.doneFor(keyOf(scorer.id, address)));
      expect(recorder.outcomes()).toEqual(['done']);

      // Re-submission re-scores from the stamps stored now, and a submission waits for its score.
      await giveStamps(ctx, address, ['Ens']);
      const again = await second.submit(scorer.id, address);
      expect(again).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google', 'Discord', 'Linkedin', 'Ens']), error: null });
      expect(await jobRows(ctx)).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
    });

    it('waits for a short write lock held by another process instead of failing queue operations', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const peer = await openPeer();
      const [a, b, c] = [randomAddress(), randomAddress(), randomAddress()];
      const now = Date.now();
      await ctx.jobs.enqueue(scorer.id, a, now);
      await ctx.jobs.enqueue(scorer.id, b, now);
      const claimedA = await ctx.jobs.claimNext('owner', now, 30_000);
      expect(claimedA?.address).toBe(a);
      if (!claimedA) throw new Error('unreachable');

      // Each operation starts while the other process holds the lock for 300 ms; each must simply wait.
      // (On SQLite a transaction that reads first and then writes cannot wait: SQLite answers
      // SQLITE_BUSY at once instead of calling the busy handler, unless it began IMMEDIATE.)
      const underLock = async <T>(name: string, operation: () => Promise<T>) => {
        await peer.lockDatabase(300);
        try {
          return { name, value: await operation() };
        } catch (error) {
          return { name, error: (error as Error).message };
        } finally {
          await peer.unlocked();
        }
      };
      const results = [
        await underLock('enqueue', () => ctx.jobs.enqueue(scorer.id, c, now)),
        await underLock('claimNext', async () => (await ctx.jobs.claimNext('owner', now, 30_000))?.address),
        await underLock('complete', () => ctx.jobs.complete(claimedA, 'owner', now, { score: '1.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [] })),
      ];
      const claimedB = await ctx.jobs.claimNext('owner', now, 30_000);
      if (claimedB) results.push(await underLock('fail', async () => ctx.jobs.fail(claimedB, 'owner', now, 'Failed.', null)));
      expect(results).toEqual([
        { name: 'enqueue', value: undefined },
        { name: 'claimNext', value: b },
        { name: 'complete', value: 'done' },
        { name: 'fail', value: 'error' },
      ]);
    });
  });

  describe('crash recovery', () => {
    it('leaves a dead worker’s job alone until its lease expires, then another worker takes and finishes it', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Linkedin']);
      await ctx.scores.submit(scorer.id, address);

      // What a SIGKILLed process leaves behind: a claimed job that is never completed.
      const leaseMs = 1200;
      const claimedAt = Date.now();
      const dead = await ctx.jobs.claimNext('dead-owner', claimedAt, leaseMs);
      expect(dead).toMatchObject({ address, state: 'running', lease_owner: 'dead-owner', lease_expires_at: claimedAt + leaseMs, attempts: 1 });
      if (!dead) throw new Error('unreachable');

      // The new owner's own lease is long: a run slowed down by a loaded machine must not outlive it.
      const second = await openPeer({ env: { SCORING_LEASE_MS: '10000' } });
      const recorder = new Recorder().watch(second, 'second');
      await second.start();

      // The second worker polls every 25 ms, but the lease is not over yet.
      await sleep(claimedAt + leaseMs - 300 - Date.now());
      const [jobBeforeExpiry, scoreBeforeExpiry, lookedAt] = [await jobRows(ctx), await scoreRow(ctx, scorer.id, address), Date.now()];
      if (lookedAt < claimedAt + leaseMs) {
        expect(jobBeforeExpiry).toMatchObject([{ id: dead.id, state: 'running', lease_owner: 'dead-owner' }]);
        expect(scoreBeforeExpiry).toMatchObject({ status: 'PROCESSING' });
      }

      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE', 5000);
      await until('the run to be reported', () => recorder.doneFor(keyOf(scorer.id, address)));
      expect(recorder.runs).toHaveLength(1);
      const [takeover] = recorder.runs as [Run];
      // The same job, under a new lease of the new owner, as a second attempt.
      expect(takeover.job).toMatchObject({ id: dead.id, lease_owner: second.owner, attempts: 2 });
      expect(takeover.job.lease_expires_at).toBeGreaterThan(claimedAt + leaseMs);
      // Taken only once the lease had run out.
      expect(takeover.startedWall).toBeGreaterThanOrEqual(claimedAt + leaseMs);
      expect(takeover.outcome).toBe('done');
      const expected = expectedScore(ctx, ['Google', 'Linkedin']);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expected, error: null });
      expect(await jobRows(ctx)).toEqual([]);

      // The dead owner comes back (a paused process, not a killed one) and reports a stale result.
      const stale = await ctx.jobs.complete(dead, 'dead-owner', Date.now(), {
        score: '999.00000',
        evidence: null,
        expirationDate: null,
        stampScores: '{}',
        claims: [{ nullifier: 'stale-claim', expiresAt: Date.now() + day }],
      });
      expect(stale).toBe('lost');
      expect(await ctx.jobs.fail(dead, 'dead-owner', Date.now(), 'stale failure', null)).toBe('lost');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expected, error: null });
      expect(await holdsOf(ctx, scorer.id, 'stale-claim')).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
    });

    it('answers lost to a stale owner while the new owner still holds the job, and lets the new owner finish', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      const now = Date.now();
      await ctx.jobs.enqueue(scorer.id, address, now);

      const first = await ctx.jobs.claimNext('first-owner', now, 100);
      expect(first?.lease_owner).toBe('first-owner');
      // Before the lease ends nobody else gets it; after, the next claimer gets the same job.
      expect(await ctx.jobs.claimNext('second-owner', now + 99, 30_000)).toBeUndefined();
      const second = await ctx.jobs.claimNext('second-owner', now + 101, 30_000);
      expect(second).toMatchObject({ id: first?.id, lease_owner: 'second-owner', attempts: 2 });
      if (!first || !second) throw new Error('unreachable');

      const staleOutcome = { score: '5.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [{ nullifier: 'n-stale', expiresAt: now + day }] };
      expect(await ctx.jobs.complete(first, 'first-owner', now + 200, staleOutcome)).toBe('lost');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING', score: null });
      expect(await holdsOf(ctx, scorer.id, 'n-stale')).toEqual([]);
      expect(await jobRows(ctx)).toMatchObject([{ id: first.id, state: 'running', lease_owner: 'second-owner' }]);

      const freshOutcome = { score: '7.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [{ nullifier: 'n-fresh', expiresAt: now + day }] };
      expect(await ctx.jobs.complete(second, 'second-owner', now + 300, freshOutcome)).toBe('done');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: '7.00000', last_score_timestamp: now + 300 });
      expect(await holdsOf(ctx, scorer.id, 'n-fresh')).toMatchObject([{ address }]);
      expect(await jobRows(ctx)).toEqual([]);
    });
  });
});
