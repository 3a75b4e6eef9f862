/**
 * `serve --no-worker` with no worker anywhere: a submission's job waits, and the server says so,
 * once in its log and in `/health/ready`'s body (still 200: the API answers). A `stampgate
 * worker` started then scores the submission, and the warning clears. Real processes; a short
 * SCORING_LEASE_MS makes the threshold (a lease and a poll) 2 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { describeSettings, loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { seedAccount } from '../helpers/app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { buildCli, cliEnvironment, freePort, RunningCli, waitFor } from '../helpers/processes.js';

const settingNames = describeSettings().map((s) => s.name);
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-no-worker-'));
const running: RunningCli[] = [];
let cliPath = '';

beforeAll(async () => {
  cliPath = await buildCli(mkdtempSync(join(workDir, 'build-')));
}, 60_000);

afterAll(() => {
  for (const proc of running) if (!proc.exit) proc.child.kill('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
});

interface Ready {
  status: string;
  warnings?: { code: string; detail: string }[];
}

describe.each(databaseKinds)('serve --no-worker without a worker on %s', (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(kind);
  });
  afterAll(async () => test?.drop());

  it('warns once in the log and in /health/ready while the job waits; a worker clears it and scores', async () => {
    const database = openDatabase(test.url);
    await migrateToLatest(database);
    const ctx = await createAppContext(loadConfig({ DATABASE_URL: test.url, STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://x.example', HOST: '127.0.0.1' }), database);
    try {
      const { key, scorer } = await seedAccount(ctx);
      const port = await freePort();
      const env = cliEnvironment(settingNames, {
        DATABASE_URL: test.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        SCORING_LEASE_MS: '1500',
        SUBMIT_WAIT_MS: '0',
        DATA_DIR: mkdtempSync(join(workDir, 'data-')),
      });
      const api = new RunningCli('serve --no-worker', cliPath, ['serve', '--no-worker'], env, workDir);
      running.push(api);
      const ready = async (): Promise<Ready> => {
        const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
        expect(res.status).toBe(200);
        return (await res.json()) as Ready;
      };
      await waitFor('the API to be ready', 60_000, async () => {
        if (api.exit) throw new Error(`exited early\n${api.tail()}`);
        return (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200;
      }, 100);
      // Nothing waits: nothing to say, however long no worker has run.
      expect(await ready()).toEqual({ status: 'ok' });

      const address = `0x${'cd'.repeat(20)}`;
      const submitted = await fetch(`http://127.0.0.1:${port}/registry/submit-passport`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ address, scorer_id: String(scorer.id) }),
      });
      expect(((await submitted.json()) as { status: string }).status).toBe('PROCESSING');

      let body: Ready = { status: '' };
      await waitFor('the readiness warning', 20_000, async () => {
        body = await ready();
        return body.warnings !== undefined;
      }, 200);
      expect(body.status).toBe('ok');
      expect(body.warnings).toEqual([{ code: 'no_scoring_worker', detail: expect.stringMatching(/^No scoring worker seen for \d+ s while 1 scoring job\(s\) wait/) }]);
      // Several more looks (every 500 ms) still make one log line.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const warnings = () => api.entries().filter((e) => e.msg.startsWith('no scoring worker seen for'));
      expect(warnings(), api.tail()).toHaveLength(1);
      expect(warnings()[0]).toMatchObject({ level: 40, waitingJobs: 1 });

      const worker = new RunningCli('worker', cliPath, ['worker'], { ...env, PORT: String(await freePort()) }, workDir);
      running.push(worker);
      let status = 'PROCESSING';
      await waitFor('the worker to score the submission', 30_000, async () => {
        const res = await fetch(`http://127.0.0.1:${port}/registry/score/${scorer.id}/${address}`, { headers: { 'x-api-key': key } });
        status = ((await res.json()) as { status: string }).status;
        return status === 'DONE';
      }, 100);
      await waitFor('the warning to clear', 10_000, async () => (await ready()).warnings === undefined, 200);
      expect(api.entries().some((e) => e.msg === 'no scoring job waits any more' || e.msg === 'a scoring worker is seen again')).toBe(true);
      expect(warnings()).toHaveLength(1);

      expect(await worker.stop()).toEqual({ code: 0, signal: null });
      expect(await api.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await ctx.close();
    }
  }, 120_000);
});
