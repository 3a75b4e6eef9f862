/**
 * The fault suite (`npm run test:cluster`): an API process (`serve --no-worker`) and a `worker`
 * on a PostgreSQL cluster and a Redis of the test's own (started in a temporary directory on free
 * ports, so stopping them is real and the shared servers are never touched), under concurrent
 * submissions:
 *
 *   1. every connection of the service is terminated with pg_terminate_backend, three times, in
 *      the middle of a burst: both processes survive, every answer is 200 or 503
 *      `database_unavailable`, every accepted submission ends DONE (scored once), and a refused one
 *      is not recorded;
 *   2. the database is stopped for a few seconds: 503 with Retry-After within a bound, readiness
 *      503, liveness 200, one warning and one end-of-outage line, automatic recovery;
 *   3. a process started while the database is down waits (live 200, ready 503, a line per
 *      attempt), then serves;
 *   4. Redis is stopped: no 5xx, submissions still scored within their wait although workers poll
 *      only every SCORING_POLL_MS (job wake-ups travel through PostgreSQL LISTEN/NOTIFY), one
 *      warning per process;
 *   5. SIGTERM to the API process during a burst on keep-alive connections: each submission is
 *      either answered 200 and recorded (then scored), or refused (503 `shutting_down`, or no
 *      connection) and not recorded; exit code 0.
 *
 * Needs PostgreSQL server binaries (/usr/lib/postgresql/<version>/bin) and redis-server.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { describeSettings, loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { seedAccount } from '../helpers/app.js';
import { buildCli, cliEnvironment, freePort, RunningCli, waitFor } from '../helpers/processes.js';
import { postgresBinaries, type PrivatePostgres, type PrivateRedis, startPrivatePostgres, startPrivateRedis } from '../helpers/private-services.js';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));
const POLL_MS = 2000;
const SUBMIT_WAIT_MS = 1500;
const RETRY_AFTER = '5';

const skipReason =
  process.env.STAMPGATE_CLUSTER_TEST !== '1'
    ? 'it runs only with `npm run test:cluster`'
    : postgresBinaries() === null
      ? 'no PostgreSQL server binaries'
      : null;
if (skipReason && process.env.CI === 'true' && process.env.STAMPGATE_CLUSTER_TEST === '1') throw new Error(`fault suite cannot run: ${skipReason}`);

interface Outcome {
  address: string;
  status: number | null;
  code?: string;
  retryAfter?: string | null;
  scoreStatus?: string;
  error?: string;
  ms: number;
}

async function submit(port: number, key: string, scorerId: number, address: string): Promise<Outcome> {
  const started = Date.now();
  try {
    const res = await fetch(`http://127.0.0.1:${port}/registry/submit-passport`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ address, scorer_id: String(scorerId) }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json()) as { code?: string; status?: string };
    return { address, status: res.status, code: body.code, scoreStatus: body.status, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { address, status: null, error: cause?.code ?? cause?.message ?? String(error), ms: Date.now() - started };
  }
}

/** `addresses` submitted by `parallel` clients on keep-alive connections; `onEach` sees each answer. */
async function burst(port: number, key: string, scorerId: number, addresses: string[], parallel: number, onEach?: (done: number) => void) {
  const outcomes: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < addresses.length) {
        const address = addresses[next++]!;
        outcomes.push(await submit(port, key, scorerId, address));
        onEach?.(outcomes.length);
      }
    }),
  );
  return outcomes;
}

const newAddresses = (count: number) => Array.from({ length: count }, () => `0x${randomBytes(20).toString('hex')}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function status(port: number, path: string): Promise<number | null> {
  return (await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) }).catch(() => null))?.status ?? null;
}

describe.skipIf(skipReason !== null)('faults: PostgreSQL and Redis of our own under concurrent submissions', () => {
  const root = mkdtempSync(join(tmpdir(), 'stampgate-faults-'));
  const settingNames = describeSettings().map((s) => s.name);
  const processes: RunningCli[] = [];
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let cliPath = '';
  /** One query on a connection of its own (the test's connections are cut like the service's). */
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: postgres.url });
    client.on('error', () => {});
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end().catch(() => {});
    }
  };
  let env: Record<string, string>;
  let api: { proc: RunningCli; port: number };
  let worker: RunningCli;
  let key = '';
  let scorerId = 0;

  const start = (label: string, args: string[], extra: Record<string, string> = {}) => {
    const proc = new RunningCli(label, cliPath, args, cliEnvironment(settingNames, { ...env, ...extra }), repoDir);
    processes.push(proc);
    return proc;
  };
  const startApi = async (label: string) => {
    const port = await freePort();
    return { proc: start(label, ['serve', '--no-worker'], { PORT: String(port) }), port };
  };
  const whenReady = (target: { proc: RunningCli; port: number }, ms = 60_000) =>
    waitFor(`${target.proc.label} ready`, ms, async () => {
      if (target.proc.exit) throw new Error(`${target.proc.label} exited ${JSON.stringify(target.proc.exit)}\n${target.proc.tail()}`);
      return (await status(target.port, '/health/ready')) === 200;
    }, 100);
  /** Score rows of these addresses: status by address. */
  const scoreRows = async (addresses: string[]) => {
    const rows = await query<{ address: string; status: string }>('select address, status from scores where scorer_id = $1 and address = any($2)', [scorerId, addresses]);
    return new Map(rows.map((row) => [row.address, row.status]));
  };
  const allDone = (addresses: string[], ms = 60_000) =>
    waitFor(`${addresses.length} scores DONE`, ms, async () => {
      const rows = await scoreRows(addresses);
      return addresses.every((address) => rows.get(address) === 'DONE');
    }, 200);
  const alive = () => {
    for (const proc of [api.proc, worker]) expect(proc.exit, proc.tail()).toBeNull();
  };
  const entriesSince = (proc: RunningCli, mark: number) =>
    proc.lines.slice(mark).filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string; [k: string]: unknown });
  const severe = (proc: RunningCli) => proc.entries().filter((entry) => entry.level >= 50);

  beforeAll(async () => {
    postgres = await startPrivatePostgres(root);
    redis = await startPrivateRedis();
    mkdirSync(join(root, 'build'));
    cliPath = await buildCli(join(root, 'build'));
    env = {
      STAMPGATE_ENV: 'development',
      DATA_DIR: join(root, 'data'),
      DATABASE_URL: postgres.url,
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
      SCORING_POLL_MS: String(POLL_MS),
      SUBMIT_WAIT_MS: String(SUBMIT_WAIT_MS),
      SCORING_LEASE_MS: '3000',
      SCORING_BACKOFF_MS: '200',
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      DATABASE_QUERY_TIMEOUT_MS: '3000',
      RETRY_AFTER_SECONDS: RETRY_AFTER,
    };
    // The account, scorer and key, written before any process runs.
    const database = openDatabase(postgres.url);
    await migrateToLatest(database);
    const ctx = await createAppContext(loadConfig({ ...env, REDIS_URL: '' }), database);
    const seeded = await seedAccount(ctx, { tier: 4 });
    await ctx.close();
    key = seeded.key;
    scorerId = seeded.scorer.id;
    api = await startApi('api');
    await whenReady(api);
    worker = start('worker', ['worker']);
    await waitFor('the worker to start', 60_000, () => worker.lines.some((line) => line.startsWith('Scoring worker ')));
  }, 120_000);

  afterAll(async () => {
    for (const proc of processes) if (!proc.exit) proc.child.kill('SIGKILL');
    await redis?.stop();
    await postgres?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('survives pg_terminate_backend of all its connections, three times, mid-burst', async () => {
    const addresses = newAddresses(150);
    const running = burst(api.port, key, scorerId, addresses, 8);
    let terminated = 0;
    for (let round = 0; round < 3; round++) {
      await sleep(400);
      const killer = new pg.Client({ connectionString: postgres.url });
      await killer.connect();
      const { rows } = await killer.query<{ n: string }>(
        "select count(pg_terminate_backend(pid)) as n from pg_stat_activity where pid <> pg_backend_pid() and backend_type = 'client backend'",
      );
      await killer.end();
      terminated += Number(rows[0]!.n);
    }
    const outcomes = await running;
    expect(terminated).toBeGreaterThan(0);
    alive();
    const unexpected = outcomes.filter((o) => !(o.status === 200 || (o.status === 503 && o.code === 'database_unavailable' && o.retryAfter === RETRY_AFTER)));
    expect(unexpected).toEqual([]);
    const accepted = outcomes.filter((o) => o.status === 200).map((o) => o.address);
    const refused = outcomes.filter((o) => o.status === 503).map((o) => o.address);
    expect(accepted.length).toBeGreaterThan(0);
    await allDone(accepted);
    expect((await scoreRows(refused)).size).toBe(0);
    // Scored once each: at most one completed run per address in the worker's log.
    const doneRuns = new Map<string, number>();
    for (const entry of worker.entries()) {
      if (entry.msg === 'scoring job settled' && entry.outcome === 'done') doneRuns.set(String(entry.address), (doneRuns.get(String(entry.address)) ?? 0) + 1);
    }
    expect([...doneRuns.values()].filter((n) => n > 1)).toEqual([]);
    expect((await query<{ n: number }>('select count(*)::int as n from scoring_jobs'))[0]!.n).toBe(0);
    expect([...severe(api.proc), ...severe(worker)]).toEqual([]);
    console.log(`terminated ${terminated} backends; ${accepted.length} accepted, ${refused.length} refused with 503`);
  });

  it('answers 503 while the database is stopped, starts a new process that waits, and recovers by itself', async () => {
    const apiMark = api.proc.lines.length;
    await postgres.stop();
    const stoppedAt = Date.now();
    for (const address of newAddresses(5)) {
      const outcome = await submit(api.port, key, scorerId, address);
      expect(outcome).toMatchObject({ status: 503, code: 'database_unavailable', retryAfter: RETRY_AFTER });
      expect(outcome.ms).toBeLessThan(2500);
    }
    expect(await status(api.port, '/health/ready')).toBe(503);
    expect(await status(api.port, '/health/live')).toBe(200);

    // A process started now waits for the database: live, not ready, one line per attempt.
    const late = await startApi('api started during the outage');
    await waitFor('the late process to answer /health/live', 30_000, async () => (await status(late.port, '/health/live')) === 200, 100);
    expect(await status(late.port, '/health/ready')).toBe(503);
    expect((await fetch(`http://127.0.0.1:${late.port}/registry/signing-message`, { headers: { 'x-api-key': key } })).status).toBe(503);
    await waitFor('a start-up attempt line', 10_000, () => late.proc.lines.some((line) => line.includes('database not reachable at start-up')));

    await sleep(Math.max(0, 3000 - (Date.now() - stoppedAt)));
    await postgres.start();
    // The first submission once the database answers again is accepted.
    await waitFor('the API to be ready again', 30_000, async () => (await status(api.port, '/health/ready')) === 200, 100);
    expect((await submit(api.port, key, scorerId, newAddresses(1)[0]!)).status).toBe(200);
    await whenReady(late, 60_000);
    const viaLate = newAddresses(1)[0]!;
    expect((await submit(late.port, key, scorerId, viaLate)).status).toBe(200);
    await allDone([viaLate]);
    alive();
    expect(late.proc.exit).toBeNull();

    const entries = entriesSince(api.proc, apiMark);
    expect(entries.filter((e) => e.msg.startsWith('database unavailable'))).toHaveLength(1);
    expect(entries.filter((e) => e.msg.startsWith('database available again'))).toHaveLength(1);
    const attempts = late.proc.lines.filter((line) => line.includes('database not reachable at start-up')).length;
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(await late.proc.stop()).toEqual({ code: 0, signal: null });
    console.log(`late process: ${attempts} start-up attempt line(s) before the database returned`);
  });

  it('keeps scoring without Redis, within the submission wait although workers poll every 2 s, with one warning', async () => {
    // Both processes hear job notices again (their LISTEN connections were cut by the restart).
    for (const proc of [api.proc, worker]) {
      await waitFor(`${proc.label} to listen again`, 30_000, () => {
        const lines = proc.entries();
        return lines.filter((e) => e.msg.startsWith('job notifications from other processes restored')).length >=
          lines.filter((e) => e.msg.startsWith('job notifications from other processes lost')).length;
      }, 100);
    }
    const marks = [api.proc.lines.length, worker.lines.length];
    await redis.stop();
    const outcomes: Outcome[] = [];
    for (const address of newAddresses(20)) outcomes.push(await submit(api.port, key, scorerId, address));
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    // Scored within the wait: the worker was woken through PostgreSQL, not found by its poll.
    expect(outcomes.filter((o) => o.scoreStatus !== 'DONE')).toEqual([]);
    const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]!).toBeLessThan(POLL_MS);
    const warnings = (proc: RunningCli, mark: number) => entriesSince(proc, mark).filter((e) => e.msg.startsWith('Redis is unreachable')).length;
    expect(warnings(api.proc, marks[0]!)).toBe(1);
    expect(warnings(worker, marks[1]!)).toBeLessThanOrEqual(1);
    await redis.start();
    await waitFor('the API to see Redis again', 30_000, () => entriesSince(api.proc, marks[0]!).some((e) => e.msg.startsWith('Redis is reachable again')), 100);
    alive();
    console.log(`without Redis: submissions p50 ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms`);
  });

  it('on SIGTERM mid-burst on keep-alive connections, records exactly what it answers 200 and exits 0', async () => {
    const addresses = newAddresses(80);
    let signalled = false;
    const outcomes = await burst(api.port, key, scorerId, addresses, 10, (done) => {
      if (done >= 20 && !signalled) {
        signalled = true;
        api.proc.child.kill('SIGTERM');
      }
    });
    const exit = await api.proc.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    const accepted = outcomes.filter((o) => o.status === 200).map((o) => o.address);
    const refused = outcomes.filter((o) => o.status !== 200);
    expect(accepted.length).toBeGreaterThanOrEqual(20);
    for (const outcome of refused) {
      if (outcome.status !== null) expect(outcome).toMatchObject({ status: 503, code: 'shutting_down', retryAfter: RETRY_AFTER });
    }
    const recordedRefusals = await scoreRows(refused.map((o) => o.address));
    expect([...recordedRefusals.keys()]).toEqual([]);
    await allDone(accepted);
    expect(severe(api.proc)).toEqual([]);
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
    expect((await query<{ n: number }>('select count(*)::int as n from scoring_jobs where lease_owner is not null'))[0]!.n).toBe(0);
    const counts = refused.reduce<Record<string, number>>((acc, o) => ((acc[String(o.status ?? o.error)] = (acc[String(o.status ?? o.error)] ?? 0) + 1), acc), {});
    console.log(`SIGTERM burst: ${accepted.length} accepted and recorded; refused: ${JSON.stringify(counts)}`);
  });
});
