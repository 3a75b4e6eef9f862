/**
 * Scoring job leases under a controllable clock: a long run keeps its job by
 * heartbeat, and a worker that stops beating (a crashed process) loses the job
 * exactly one lease after its last beat, not sooner and not later.
 */
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ScoringJobRow } from '../../../src/scoring/jobs/scoring-jobs.repository.js';
import type { ScoringOutcome } from '../../../src/scoring/records/score-outcome.js';
import { type JobSettled, type LeaseRenewal, ScoringWorker } from '../../../src/scoring/jobs/scoring-worker.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';

const LEASE_MS = 1000;
const outcome: ScoringOutcome = { score: '1.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [] };

describe.each(databaseKinds)('scoring job leases on %s', (kind) => {
  let t: TestApp;
  let now: number;
  const clock = () => now;
  const workers: ScoringWorker[] = [];

  beforeEach(async () => {
    t = await createTestApp(kind);
    now = Date.now();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    await t.close();
  });

  async function queuedJob(): Promise<{ scorerId: number; address: string }> {
    const { scorer } = await seedAccount(t.ctx);
    const address = `0x${randomBytes(20).toString('hex')}`;
    await t.ctx.jobs.enqueue(scorer.id, address, now);
    return { scorerId: scorer.id, address };
  }

  function worker(score: () => Promise<ScoringOutcome>): ScoringWorker {
    const w = new ScoringWorker(t.ctx.jobs, score, { concurrency: 1, leaseMs: LEASE_MS, pollMs: 60_000, maxAttempts: 3, backoffBaseMs: 10, heartbeatMs: 5 }, clock);
    w.on('failure', (error) => {
      throw error;
    });
    workers.push(w);
    return w;
  }

  /** Waits for a beat that read the clock at its current value. */
  async function renewalAt(w: ScoringWorker, at: number): Promise<LeaseRenewal> {
    for (;;) {
      const [renewal] = (await once(w, 'leaseRenewed')) as [LeaseRenewal];
      if (renewal.expiresAt === at + LEASE_MS) return renewal;
    }
  }

  const leaseOf = async (id: number) =>
    (await t.ctx.database.db.selectFrom('scoring_jobs').select(['lease_owner', 'lease_expires_at', 'state']).where('id', '=', id).executeTakeFirstOrThrow());

  it('renews the lease of a run longer than one lease, so no other worker takes the job, and completes it', async () => {
    const { scorerId, address } = await queuedJob();
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const long = worker(async () => {
      await gate;
      return outcome;
    });
    const started = once(long, 'started');
    long.start();
    const [job] = (await started) as [ScoringJobRow];
    expect(job.lease_expires_at).toBe(now + LEASE_MS);

    // Most of a lease passes; the next beat moves the lease on from there.
    now += 900;
    expect(await renewalAt(long, now)).toEqual({ jobId: job.id, held: true, expiresAt: now + LEASE_MS });
    expect(await leaseOf(job.id)).toMatchObject({ lease_owner: long.owner, lease_expires_at: now + LEASE_MS, state: 'running' });
    // Past the first lease's end (and again past the second's): another worker finds nothing to take.
    now += 900;
    expect(await t.ctx.jobs.claimNext('other', now, LEASE_MS)).toBeUndefined();
    await renewalAt(long, now);
    now += 900;
    expect(await t.ctx.jobs.claimNext('other', now, LEASE_MS)).toBeUndefined();

    const settled = once(long, 'settled');
    finish();
    expect(((await settled) as [JobSettled])[0]).toMatchObject({ scorerId, address, outcome: 'done' });
    const score = await t.ctx.database.db.selectFrom('scores').select(['status', 'score']).where('scorer_id', '=', scorerId).where('address', '=', address).executeTakeFirstOrThrow();
    expect(score).toEqual({ status: 'DONE', score: '1.00000' });
  });

  it("reclaims a crashed worker's job one lease after its last beat: not at the lease's last millisecond, at the next", async () => {
    await queuedJob();
    // A worker that claimed, beat once, then died (no more beats, no release).
    const claimedAt = now;
    const crashed = await t.ctx.jobs.claimNext('crashed', claimedAt, LEASE_MS);
    if (!crashed) throw new Error('nothing claimed');
    now += 400;
    const lastBeat = now;
    expect(await t.ctx.jobs.renewLease(crashed, 'crashed', lastBeat, LEASE_MS)).toBe(true);

    // Not sooner: the original lease's end has passed, the renewed one has not.
    now = claimedAt + LEASE_MS + 1;
    expect(await t.ctx.jobs.claimNext('other', now, LEASE_MS)).toBeUndefined();
    now = lastBeat + LEASE_MS;
    expect(await t.ctx.jobs.claimNext('other', now, LEASE_MS)).toBeUndefined();

    // Not later: a worker looking one millisecond after the lease ends takes it, and runs it.
    now = lastBeat + LEASE_MS + 1;
    const taker = worker(async () => outcome);
    const started = once(taker, 'started');
    const settled = once(taker, 'settled');
    taker.start();
    const [job] = (await started) as [ScoringJobRow];
    expect(job).toMatchObject({ id: crashed.id, lease_owner: taker.owner, attempts: 2, lease_expires_at: now + LEASE_MS });
    expect(((await settled) as [JobSettled])[0].outcome).toBe('done');
    // The crashed owner, were it only paused, can no longer renew.
    expect(await t.ctx.jobs.renewLease(crashed, 'crashed', now, LEASE_MS)).toBe(false);
  });
});
