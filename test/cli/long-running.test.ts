/**
 * The long-running commands as an operator starts them, with exactly the environment the README
 * shows (no WORKER_PORT): on SQLite the quick start's (nothing set; ./data in the working
 * directory), on PostgreSQL the production one (STAMPGATE_ENV, PUBLIC_BASE_URL, DATABASE_URL,
 * REDIS_URL, HOST, TRUST_PROXY), each with its own PORT. `serve`, `serve --no-worker` and `worker` must still run
 * after 5 s (they live until a signal by construction, whatever holds the event loop), a
 * submission made through `serve --no-worker` must be scored by the separate `worker` (the
 * in-process worker of `serve` is stopped first), and SIGTERM must end each with code 0, leaving
 * no job claimed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { describeSettings, loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { seedAccount } from '../helpers/app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { buildCli, cliEnvironment, freePort, RunningCli, waitFor } from '../helpers/processes.js';

const settingNames = describeSettings().map((s) => s.name);
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-long-running-'));
const running: RunningCli[] = [];
let cliPath = '';

beforeAll(async () => {
  cliPath = await buildCli(mkdtempSync(join(workDir, 'build-')));
}, 60_000);

afterAll(async () => {
  for (const proc of running) if (!proc.exit) proc.child.kill('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
});

describe.each(databaseKinds)('serve, serve --no-worker and worker on %s', (kind) => {
  let test: TestDatabase | null = null;
  afterAll(async () => test?.drop());

  it('run until SIGTERM, score through a separate worker, and exit 0 leaving no job claimed', async () => {
    const cwd = mkdtempSync(join(workDir, `${kind}-`));
    let readmeEnv: Record<string, string>;
    let databaseUrl: string;
    if (kind === 'sqlite') {
      readmeEnv = {};
      databaseUrl = `sqlite:${join(cwd, 'data', 'stampgate.sqlite')}`;
    } else {
      test = await createTestDatabase('postgres');
      databaseUrl = test.url;
      readmeEnv = {
        STAMPGATE_ENV: 'production',
        PUBLIC_BASE_URL: 'https://passport.example.org',
        DATABASE_URL: databaseUrl,
        // Required in production; the README's 0.0.0.0 would expose a test server to the network.
        HOST: '127.0.0.1',
        TRUST_PROXY: '10.0.0.2',
        ...(inject('redisUrl') ? { REDIS_URL: inject('redisUrl')! } : {}),
      };
    }
    const start = async (label: string, args: string[]) => {
      const port = await freePort();
      const proc = new RunningCli(label, cliPath, args, cliEnvironment(settingNames, { ...readmeEnv, PORT: String(port) }), cwd);
      running.push(proc);
      return { proc, port };
    };
    const ready = async ({ proc, port }: { proc: RunningCli; port: number }) =>
      waitFor(`${proc.label} to be ready`, 60_000, async () => {
        if (proc.exit) throw new Error(`${proc.label} exited early ${JSON.stringify(proc.exit)}\n${proc.tail()}`);
        return (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200;
      }, 100);

    // `serve` first: it migrates (and on SQLite in development creates the demo setup).
    const serve = await start('serve', ['serve']);
    await ready(serve);
    const apiOnly = await start('serve --no-worker', ['serve', '--no-worker']);
    const worker = await start('worker', ['worker']);
    await ready(apiOnly);
    await waitFor('the worker to start', 60_000, () => {
      if (worker.proc.exit) throw new Error(`worker exited early ${JSON.stringify(worker.proc.exit)}\n${worker.proc.tail()}`);
      return worker.proc.lines.some((line) => line.startsWith('Scoring worker '));
    });

    await new Promise((resolve) => setTimeout(resolve, 5000));
    for (const { proc } of [serve, apiOnly, worker]) expect(proc.exit, proc.tail()).toBeNull();

    // Only the separate worker is left to score.
    expect(await serve.proc.stop()).toEqual({ code: 0, signal: null });

    const config = loadConfig({ ...readmeEnv, DATABASE_URL: databaseUrl, DATA_DIR: join(cwd, 'data'), REDIS_URL: '' });
    const database = openDatabase(databaseUrl);
    const ctx = await createAppContext(config, database);
    try {
      const { key, scorer } = await seedAccount(ctx);
      const address = `0x${'ab'.repeat(20)}`;
      const submitted = await fetch(`http://127.0.0.1:${apiOnly.port}/registry/submit-passport`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ address, scorer_id: String(scorer.id) }),
      });
      expect(submitted.status).toBe(200);
      let status = ((await submitted.json()) as { status: string }).status;
      await waitFor('the worker to score the submission', 30_000, async () => {
        if (status === 'DONE') return true;
        const res = await fetch(`http://127.0.0.1:${apiOnly.port}/registry/score/${scorer.id}/${address}`, { headers: { 'x-api-key': key } });
        status = ((await res.json()) as { status: string }).status;
        return status === 'DONE';
      }, 100);

      expect(await apiOnly.proc.stop()).toEqual({ code: 0, signal: null });
      expect(await worker.proc.stop()).toEqual({ code: 0, signal: null });
      const claimed = await database.db.selectFrom('scoring_jobs').select('id').where('lease_owner', 'is not', null).execute();
      expect(claimed).toEqual([]);
    } finally {
      await ctx.close();
    }
  }, 120_000);
});
