/**
 * Graceful shutdown of real `stampgate serve` and `stampgate worker` processes. On SIGTERM each
 * must exit with code 0 well before the 15 s forced exit, finish (or release) the scoring jobs it
 * holds, leave no job row claimed under its owner, and stop taking new jobs (the rest stay queued
 * for the next process).
 *
 * SQLite: the processes are stopped while working off a backlog. Its driver is synchronous, so a
 * job runs from claim to completion within one event-loop turn and a signal can only be handled
 * between jobs; what matters there is that it is handled at all while jobs are queued, and that
 * the database is closed (the last SQLite connection to close removes the -wal file, so each
 * process is made the last one open when it is stopped).
 *
 * PostgreSQL (when the test run has it): a worker gets SIGTERM while four jobs are provably in
 * its hands, each held in the middle of its completion transaction by a table lock the test
 * holds on nullifier_holds; after the lock is released it must finish them and exit 0.
 *
 * The processes run src/ transpiled once by esbuild into a private directory; see buildCli in
 * test/cluster/cluster.test.ts for why that and not tsx or `npm run build`.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { describeSettings, loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { scoringJobsRepository } from '../../src/scoring/jobs/scoring-jobs.repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { giveStamps } from '../helpers/stamps.js';
import { buildCli, cliEnvironment, type Exit, freePort, LoggedProcess, waitFor, withTimeout } from '../helpers/processes.js';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));
/** Well below the 15 s after which a stuck shutdown is forced with exit code 1. */
const EXIT_BOUND_MS = 10_000;
const JOBS = 3000;

class Proc extends LoggedProcess {
  /** Job log lines: how many runs started, settled, and are open now. */
  jobs(): { started: number; settled: number; open: number; owners: Set<string>; outcomes: Record<string, number> } {
    let started = 0;
    let settled = 0;
    const owners = new Set<string>();
    const outcomes: Record<string, number> = {};
    for (const line of this.lines) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; owner?: string; outcome?: string };
      if (entry.msg === 'scoring job started') started++;
      else if (entry.msg === 'scoring job settled') {
        settled++;
        outcomes[entry.outcome ?? '?'] = (outcomes[entry.outcome ?? '?'] ?? 0) + 1;
      } else continue;
      if (entry.owner) owners.add(entry.owner);
    }
    return { started, settled, open: started - settled, owners, outcomes };
  }
}





const processes: Proc[] = [];
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-shutdown-'));
let cliPath = '';

beforeAll(async () => {
  mkdirSync(join(workDir, 'build'));
  cliPath = await buildCli(join(workDir, 'build'));
}, 60_000);

afterAll(async () => {
  for (const proc of processes) if (!proc.exit) proc.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => withTimeout(p.exited, 10_000, p.label).catch(() => {})));
  rmSync(workDir, { recursive: true, force: true });
});

function start(label: string, args: string[], settings: Record<string, string>): Proc {
  const env = cliEnvironment(describeSettings().map((s) => s.name), { STAMPGATE_ENV: 'development', HOST: '127.0.0.1', LOG_LEVEL: 'debug', ...settings });
  const proc = new Proc(label, spawn(process.execPath, [cliPath, ...args], { cwd: repoDir, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  processes.push(proc);
  return proc;
}

async function sigterm(proc: Proc): Promise<{ exit: Exit; ms: number }> {
  const sentAt = Date.now();
  proc.child.kill('SIGTERM');
  const exit = await withTimeout(proc.exited, 20_000, `${proc.label} exit after SIGTERM`);
  await proc.closed;
  return { exit, ms: exit.at - sentAt };
}

describe('SIGTERM on SQLite: serve and worker stop mid-backlog and exit 0', () => {
  const dataDir = join(workDir, 'sqlite-data');
  const sqliteFile = join(dataDir, 'stampgate.sqlite');
  const settings = { DATA_DIR: dataDir, SCORING_POLL_MS: '50' };

  async function startServe(args: string[]): Promise<Proc> {
    const port = await freePort();
    const proc = start(args.join(' '), args, { ...settings, PORT: String(port) });
    await waitFor(`${proc.label} to answer /health/ready`, 60_000, async () => {
      if (proc.exit) throw new Error(`${proc.label} exited early ${JSON.stringify(proc.exit)}\n${proc.tail()}`);
      const res = await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null);
      return res?.status === 200;
    }, 100);
    return proc;
  }

  /** Queues jobs for the demo scorer (id 1) straight through the repository, then closes the connection. */
  async function enqueue(count: number): Promise<void> {
    const database = openDatabase(`sqlite:${sqliteFile}`);
    try {
      const jobs = scoringJobsRepository(database);
      for (let i = 0; i < count; i++) await jobs.enqueue(1, `0x${randomBytes(20).toString('hex')}`, Date.now());
    } finally {
      await database.close();
    }
  }

  async function jobRows(owner: string) {
    const database = openDatabase(`sqlite:${sqliteFile}`);
    try {
      const rows = await database.db.selectFrom('scoring_jobs').select(['state', 'lease_owner']).execute();
      return {
        claimedByOwner: rows.filter((r) => r.lease_owner === owner).length,
        running: rows.filter((r) => r.state === 'running').length,
        queued: rows.filter((r) => r.state === 'queued').length,
      };
    } finally {
      await database.close();
    }
  }

  /** Waits until `proc` is visibly working off the queue, then sends SIGTERM. */
  async function terminateWhileBusy(proc: Proc): Promise<{ exit: Exit; ms: number }> {
    await waitFor(`${proc.label} to settle 30 jobs`, 60_000, () => {
      if (proc.exit) throw new Error(`${proc.label} exited early ${JSON.stringify(proc.exit)}\n${proc.tail()}`);
      return proc.jobs().settled >= 30;
    }, 2);
    return sigterm(proc);
  }

  it('a worker stops taking jobs, finishes the one in hand and exits 0; so does `serve --no-worker`', async () => {
    const serve = await startServe(['serve', '--no-worker']);
    await enqueue(JOBS);
    const worker = start('worker', ['worker'], settings);

    // serve first, so that the worker is the last process with the database open.
    const serveStop = await sigterm(serve);
    expect(serveStop.exit, serve.tail()).toMatchObject({ code: 0, signal: null });
    expect(serveStop.ms).toBeLessThan(EXIT_BOUND_MS);

    const stopped = await terminateWhileBusy(worker);
    expect(stopped.exit, worker.tail()).toMatchObject({ code: 0, signal: null });
    expect(stopped.ms).toBeLessThan(EXIT_BOUND_MS);
    const jobs = worker.jobs();
    expect(jobs.open, 'runs started but never settled').toBe(0);
    expect(jobs.owners.size).toBe(1);
    expect(existsSync(`${sqliteFile}-wal`), 'the worker closed the database').toBe(false);

    const rows = await jobRows([...jobs.owners][0] as string);
    expect(rows.claimedByOwner, 'jobs left claimed by the stopped worker').toBe(0);
    expect(rows.running).toBe(0);
    expect(rows.queued, 'SIGTERM must be handled while jobs are queued (the worker stops taking them), not after the queue is drained').toBeGreaterThan(0);
    expect(rows.queued + jobs.settled).toBeGreaterThanOrEqual(JOBS);
    console.log(`serve --no-worker exited in ${serveStop.ms} ms; the worker in ${stopped.ms} ms after ${jobs.settled} runs, ${rows.queued} jobs left queued`);
  }, 120_000);

  it('serve with its in-process worker takes up the queued jobs, stops mid-backlog on SIGTERM and exits 0', async () => {
    await enqueue(JOBS);
    const serve = await startServe(['serve']);
    const stopped = await terminateWhileBusy(serve);
    expect(stopped.exit, serve.tail()).toMatchObject({ code: 0, signal: null });
    expect(stopped.ms).toBeLessThan(EXIT_BOUND_MS);
    const jobs = serve.jobs();
    expect(jobs.open, 'runs started but never settled').toBe(0);
    expect(jobs.owners.size).toBe(1);
    expect(existsSync(`${sqliteFile}-wal`), 'serve closed the database').toBe(false);

    const rows = await jobRows([...jobs.owners][0] as string);
    expect(rows.claimedByOwner, 'jobs left claimed by the stopped process').toBe(0);
    expect(rows.running).toBe(0);
    expect(rows.queued, 'SIGTERM must be handled while jobs are queued, not after the queue is drained').toBeGreaterThan(0);
    console.log(`serve exited in ${stopped.ms} ms after ${jobs.settled} runs, ${rows.queued} jobs left queued`);
  }, 120_000);
});

describe.skipIf(!inject('postgresUrl'))('SIGTERM on PostgreSQL: a worker with jobs in hand', () => {
  const dataDir = join(workDir, 'pg-data');
  let test: TestDatabase | null = null;
  afterAll(async () => {
    await test?.drop();
  });

  it('finishes the jobs it holds, claims no more, and exits 0', async () => {
    test = await createTestDatabase('postgres');
    const database = test.open();
    await migrateToLatest(database);
    const ctx = await createAppContext(loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: test.url }), database);
    const account = await ctx.accounts.createAccount('Shutdown test');
    const scorer = await ctx.accounts.createScorer(account.id, { name: 'weighted', type: 'weighted' });
    const addresses = Array.from({ length: 10 }, () => `0x${randomBytes(20).toString('hex')}`);
    for (const address of addresses) {
      await giveStamps(ctx, address, ['Google', 'Discord']);
      await ctx.jobs.enqueue(scorer.id, address, Date.now());
    }
    await ctx.close();

    // Every completion writes nullifier holds: with this lock held, each job the worker takes
    // waits in its completion transaction, leased and row-locked.
    const locker = new pg.Client({ connectionString: test.url, statement_timeout: 30_000 });
    await locker.connect();
    let locked = true;
    try {
      await locker.query('begin');
      await locker.query('lock table nullifier_holds in share mode');
      const worker = start('worker', ['worker'], { DATA_DIR: dataDir, DATABASE_URL: test.url, SCORING_CONCURRENCY: '4' });
      await waitFor('the worker to hold 4 jobs', 60_000, () => {
        if (worker.exit) throw new Error(`worker exited early ${JSON.stringify(worker.exit)}\n${worker.tail()}`);
        return worker.jobs().open === 4 && Date.now() - worker.lastOutputAt > 300;
      }, 20);

      const sentAt = Date.now();
      worker.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      const aliveWhileHeld = worker.exit === null;
      await locker.query('commit');
      locked = false;
      const exit = await withTimeout(worker.exited, 20_000, 'worker exit after SIGTERM');
      await worker.closed;
      const ms = exit.at - sentAt;
      expect(exit, worker.tail()).toMatchObject({ code: 0, signal: null });
      expect(ms).toBeLessThan(EXIT_BOUND_MS);
      expect(aliveWhileHeld, 'the worker waits for the jobs in its hands').toBe(true);

      const jobs = worker.jobs();
      expect({ started: jobs.started, settled: jobs.settled, outcomes: jobs.outcomes }).toEqual({ started: 4, settled: 4, outcomes: { done: 4 } });
      const owner = [...jobs.owners][0] as string;
      const check = test.open();
      try {
        const rows = await check.db.selectFrom('scoring_jobs').select(['state', 'lease_owner']).execute();
        expect(rows.filter((r) => r.lease_owner === owner)).toEqual([]);
        expect(rows.map((r) => r.state)).toEqual(Array(6).fill('queued'));
        const done = await check.db.selectFrom('scores').select('status').where('status', '=', 'DONE').execute();
        expect(done.length).toBe(4);
      } finally {
        await check.close();
      }
      console.log(`PostgreSQL worker exited ${ms} ms after SIGTERM (the jobs it held were released from the lock after 500 ms)`);
    } finally {
      if (locked) await locker.query('rollback').catch(() => {});
      await locker.end();
    }
  }, 120_000);
});

describe.skipIf(!inject('redisUrl'))('refused start-up', () => {
  it('exits 2 with the message at once, even with Redis connections open', async () => {
    const proc = start('serve without PUBLIC_BASE_URL', ['serve'], {
      STAMPGATE_ENV: 'production',
      DATA_DIR: join(workDir, 'refused-data'),
      REDIS_URL: inject('redisUrl')!,
      PORT: String(await freePort()),
    });
    const exit = await withTimeout(proc.exited, 15_000, 'a refused serve to exit');
    await proc.closed;
    expect(exit.code).toBe(2);
    expect(proc.tail()).toContain('PUBLIC_BASE_URL must be set in production');
  }, 30_000);
});
