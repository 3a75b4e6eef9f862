import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { scoreService } from '../../../src/scoring/scores/scores.service.js';
import { scoresRepository } from '../../../src/scoring/scores/scores.repository.js';
import { createTestApp, seedAccount } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';

describe.each(databaseKinds)('a waiting submission on %s', (kind) => {
  it('answers as soon as a settled job is announced, not at its next look at the database', async () => {
    const t = await createTestApp(kind);
    try {
      const { scorer } = await seedAccount(t.ctx);
      const settledJobs = new EventEmitter();
      // Looks at the database only every 10 s: only the announcement can end the wait early.
      const service = scoreService(scoresRepository(t.ctx.database.db), t.ctx.jobs, null, { submitWaitMs: 20_000, waitPollMs: 10_000, settledJobs });
      const address = `0x${'6'.repeat(40)}`;
      const started = Date.now();
      const answer = service.submit(scorer.id, address);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // A worker elsewhere scores it and announces it.
      const job = await t.ctx.jobs.claimNext('elsewhere', Date.now(), 30_000);
      expect(job?.address).toBe(address);
      expect(await t.ctx.jobs.complete(job!, 'elsewhere', Date.now(), { score: '0.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [] })).toBe('done');
      settledJobs.emit('settled', { scorerId: scorer.id, address: `0x${'7'.repeat(40)}` });
      settledJobs.emit('settled', { scorerId: scorer.id, address });
      expect(await answer).toMatchObject({ status: 'DONE', score: '0.00000' });
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await t.close();
    }
  });

  it('is ended by shutdown, answers, and only then is the database closed', async () => {
    // No worker runs, so a submission would wait its whole 20 s budget.
    const t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000' });
    const { scorer } = await seedAccount(t.ctx);
    const started = Date.now();
    const waiting = [1, 2, 3].map((n) => t.ctx.scores.submit(scorer.id, `0x${String(n).repeat(40)}`));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await t.ctx.scores.drain();
    const records = await Promise.all(waiting);
    expect(records.map((r) => r.status)).toEqual(['PROCESSING', 'PROCESSING', 'PROCESSING']);
    expect(Date.now() - started).toBeLessThan(5000);
    // During the drain a submission still arrives from a request the HTTP server took before it
    // began to drain: it is recorded and answered, without the wait.
    const late = Date.now();
    expect((await t.ctx.scores.submit(scorer.id, `0x${'4'.repeat(40)}`)).address).toBe(`0x${'4'.repeat(40)}`);
    expect(Date.now() - late).toBeLessThan(5000);
    expect(await t.ctx.database.db.selectFrom('scores').select('address').where('address', '=', `0x${'4'.repeat(40)}`).executeTakeFirst()).toBeDefined();
    // Once the service closes, a new submission is refused instead of reaching a closing database.
    await t.ctx.scores.close();
    await expect(t.ctx.scores.submit(scorer.id, `0x${'5'.repeat(40)}`)).rejects.toMatchObject({ code: 'shutting_down' });
    await t.close();
  });
});
