/**
 * The cluster test (`npm run test:cluster`): real `stampgate` OS processes on one throw-away
 * PostgreSQL database and one Redis, all sharing one DATA_DIR (so they trust the same
 * development issuer key).
 *
 *   - set-up with the CLI: an account, a weighted scorer (one weight overridden), a tier-4 and a
 *     tier-1 key, and stamps for 100 addresses imported with `stamps import` (credentials issued
 *     here with the development issuer's key; four groups of three addresses share a nullifier);
 *   - 2 API processes (`serve --no-worker`) and 2 `worker` processes (LOG_LEVEL=debug);
 *   - 500 submissions over the 100 addresses, alternating between the API processes; midway a
 *     worker is SIGKILLed while it provably holds jobs, and another worker is started;
 *   - every score DONE and equal to the engine's result computed here from the stamps and the
 *     final nullifier holds (and to a plain catalogue-weight sum);
 *   - the workers' debug log: no two runs of one (scorer, address) overlap in time, and the
 *     killed worker's unfinished jobs are taken over only after their lease;
 *   - the tier-1 key's 125 requests are shared by both API processes (Redis);
 *   - SIGTERM: every process exits with code 0 well within 15 s.
 *
 * How the kill is made to catch jobs in hand: scoring takes milliseconds, so a kill at a random
 * moment would rarely find one. The test holds `LOCK TABLE nullifier_holds IN SHARE MODE` for a
 * moment: a worker completing a job writes its nullifier holds in the completion transaction, so
 * every job that reaches completion waits there, leased and row-locked, while submissions and
 * claims go on. Once the doomed worker has all its slots waiting, it is killed; then the lock is
 * released.
 *
 * The processes run src/ transpiled once by esbuild into a private directory (see buildCli).
 * Helpers: cluster-environment.ts (services, skip), cluster-processes.ts (processes, HTTP),
 * cluster-fixtures.ts (stamps, expected scores), worker-logs.ts (runs, overlaps, takeovers).
 * Needs PostgreSQL (TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test)
 * and Redis (TEST_REDIS_URL, default redis://127.0.0.1:6379); without them a local run skips,
 * under CI=true it fails. CLUSTER_SEED=<n> replays a run's addresses and stamp choices.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NullifierHold } from '../../src/scoring/scorers/engine.js';
import { DEV_ISSUER_KEY_FILE } from '../../src/scoring/stamps/dev-issuer.js';
import { buildCli, freePort, withTimeout } from '../helpers/processes.js';
import { adminUrl, redisUrl, repoDir, unavailableReason } from './cluster-environment.js';
import { buildFixtures, type SharingGroup, scoreMismatches, seededRandom, usableStamps, type Wallet } from './cluster-fixtures.js';
import { childEnv, cliJson, request, runStampgate, type StampgateProcess, spawned, useCli, waitUntil, workerOwner } from './cluster-processes.js';
import { overlapsOf, problemLines, type Run, runsByJob, runsOf, takeoversOf, unfinishedCount } from './worker-logs.js';

const LEASE_MS = 2000;
const POLL_MS = 100;
const CONCURRENCY = 4;
const ADDRESSES = 100;
const SUBMISSIONS = 500;
const CLIENT_PARALLELISM = 8;
const TIER1_BUDGET = 125;
const SHUTDOWN_LIMIT_MS = 15_000;

const skipReason = await unavailableReason();

describe.skipIf(skipReason !== null)('a cluster: 2 API processes, workers, one PostgreSQL, one Redis', () => {
  const seed = Number(process.env.CLUSTER_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const started = Date.now();
  const timings: Record<string, number> = {};
  const mark = (name: string, since: number) => {
    timings[name] = Date.now() - since;
  };
  const processes: StampgateProcess[] = [];
  // Made in beforeAll: a skipped suite's body still runs (to list its tests), its hooks do not.
  let workDir = '';
  let dataDir = '';
  const databaseName = `stampgate_cluster_${Date.now()}_${process.pid}`;
  const databaseUrl = (() => {
    const url = new URL(adminUrl);
    url.pathname = `/${databaseName}`;
    return url.toString();
  })();
  let databaseCreated = false;
  let db: pg.Client;

  let cliEnv: NodeJS.ProcessEnv = {};
  let workerEnv: NodeJS.ProcessEnv = {};
  let common: Record<string, string> = {};

  let scorer: { id: number; type: 'weighted' | 'binary'; threshold: string; weights: Record<string, string> };
  let tier4: { key: string; prefix: string };
  let tier1: { key: string; prefix: string };
  let wallets: Wallet[];
  let groups: SharingGroup[];
  let pool: string[];
  let weightOf: (provider: string) => string;
  const api: { proc: StampgateProcess; port: number }[] = [];
  const workers: { proc: StampgateProcess; owner: string }[] = [];
  let killed: { proc: StampgateProcess; owner: string; at: number; unfinishedAtKill: number } | null = null;

  function startWorker(label: string) {
    const proc = runStampgate(label, ['worker'], workerEnv);
    processes.push(proc);
    return proc;
  }

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'stampgate-cluster-'));
    dataDir = join(workDir, 'data');
    common = {
      STAMPGATE_ENV: 'development',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SCORING_LEASE_MS: String(LEASE_MS),
      SCORING_POLL_MS: String(POLL_MS),
      SCORING_CONCURRENCY: String(CONCURRENCY),
      SUBMIT_WAIT_MS: '20',
    };
    cliEnv = childEnv(common);
    workerEnv = childEnv({ ...common, LOG_LEVEL: 'debug' });
    console.log(`cluster test: seed ${seed} (CLUSTER_SEED=${seed} replays it), database ${databaseName}, DATA_DIR ${dataDir}`);
    let since = Date.now();
    mkdirSync(join(workDir, 'build'));
    useCli(await buildCli(join(workDir, 'build')));
    mark('build (esbuild)', since);
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${databaseName}`);
    await admin.end();
    databaseCreated = true;
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();

    // The first command migrates the database and creates DATA_DIR/dev-issuer.key.
    since = Date.now();
    const account = await cliJson<{ id: number }>(['accounts', 'create', '--name', 'Cluster test'], cliEnv);
    mark('first CLI command (migrations)', since);

    const usable = usableStamps(join(repoDir, 'assets', 'stamp-catalogue.json'));
    pool = usable.map((s) => s.name);
    const overrides = { [pool[0] as string]: '2.5' };
    weightOf = (provider) => overrides[provider] ?? (usable.find((s) => s.name === provider)?.weight as string);

    since = Date.now();
    const privateKey = readFileSync(join(dataDir, DEV_ISSUER_KEY_FILE), 'utf8').trim() as Hex;
    ({ wallets, groups } = buildFixtures(seed, privateKey, pool, ADDRESSES));
    const stampsFile = join(dataDir, 'stamps.json');
    writeFileSync(stampsFile, JSON.stringify(wallets.map((w) => ({ address: w.address, credentials: w.credentials }))));
    mark('issue credentials', since);

    // Everything else at once: set-up commands, the API processes and the workers.
    since = Date.now();
    const ports = [await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) {
      const proc = runStampgate(`api-${i + 1}`, ['serve', '--no-worker'], childEnv({ ...common, PORT: String(port) }));
      processes.push(proc);
      api.push({ proc, port });
    }
    const workerProcs = [startWorker('worker-A'), startWorker('worker-B')];
    const [createdScorer, key4, key1, imported] = await Promise.all([
      cliJson<typeof scorer>(
        ['scorers', 'create', '--account', String(account.id), '--name', 'Cluster weighted', '--type', 'weighted', '--weight', `${pool[0]}=2.5`],
        cliEnv,
      ),
      cliJson<{ key: string; prefix: string; tier: number }>(['keys', 'create', '--account', String(account.id), '--tier', '4', '--name', 'tier4'], cliEnv),
      cliJson<{ key: string; prefix: string; tier: number }>(['keys', 'create', '--account', String(account.id), '--tier', '1', '--name', 'tier1'], cliEnv),
      cliJson<{ stored: number; rejected: number; results: unknown[] }>(['stamps', 'import', stampsFile], cliEnv),
    ]);
    mark('set-up commands (scorer, 2 keys, stamps import), processes starting meanwhile', since);
    scorer = createdScorer;
    tier4 = key4;
    tier1 = key1;
    expect(scorer.weights).toEqual(overrides);
    expect([key4.tier, key1.tier]).toEqual([4, 1]);
    const stampCount = wallets.reduce((n, w) => n + w.credentials.length, 0);
    expect({ stored: imported.stored, rejected: imported.rejected }).toEqual({ stored: stampCount, rejected: 0 });

    for (const { proc, port } of api) {
      await waitUntil(`${proc.label} to be ready`, 120_000, async () => {
        if (proc.exit) throw new Error(`${proc.label} exited early\n${proc.tail()}`);
        const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null);
        return ready?.status === 200 ? true : undefined;
      }, 100);
    }
    for (const proc of workerProcs) workers.push({ proc, owner: await workerOwner(proc) });
    mark('until 2 API processes and 2 workers are up', since);
  });

  afterAll(async () => {
    for (const proc of spawned) if (!proc.exit) proc.child.kill('SIGKILL');
    await Promise.all(spawned.map((p) => withTimeout(p.exited, 10_000, `${p.label} exit`).catch(() => {})));
    await db?.end().catch(() => {});
    if (databaseCreated) {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`drop database if exists ${databaseName} with (force)`);
      await admin.end();
    }
    if (tier1 || tier4) {
      const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
      await redis.del(...[tier1, tier4].filter(Boolean).map((k) => `stampgate:ratelimit:key:${k.prefix}`)).catch(() => {});
      redis.disconnect();
    }
    if (workDir) rmSync(workDir, { recursive: true, force: true });
    timings.total = Date.now() - started;
    console.log(`cluster test timings (ms): ${JSON.stringify(timings)}`);
  });

  it('scores 500 submissions over 100 addresses correctly while a worker is killed mid-run', async () => {
    const random = seededRandom(seed ^ 0x5eed);
    const submissions = Array.from({ length: SUBMISSIONS }, (_, i) => (wallets[i % ADDRESSES] as Wallet).address);
    for (let i = submissions.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [submissions[i], submissions[j]] = [submissions[j] as string, submissions[i] as string];
    }
    const answered: Record<string, number> = {};
    const refused: string[] = [];
    let nextIndex = 0;
    const submitUpTo = async (end: number) => {
      await Promise.all(
        Array.from({ length: CLIENT_PARALLELISM }, async () => {
          while (nextIndex < end) {
            const i = nextIndex++;
            const target = api[i % 2] as { port: number };
            const res = await request(target.port, 'POST', '/registry/submit-passport', tier4.key, {
              address: submissions[i],
              scorer_id: String(scorer.id),
            });
            if (res.status === 200) answered[res.body.status] = (answered[res.body.status] ?? 0) + 1;
            else refused.push(`#${i}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
          }
        }),
      );
    };

    let since = Date.now();
    await submitUpTo(200);
    mark('first 200 submissions', since);

    // Hold completions (see the header) and keep submitting until worker A has every slot
    // waiting in a completion and has been quiet for a while: it holds leased jobs for sure.
    const locker = new pg.Client({ connectionString: databaseUrl, statement_timeout: 20_000 });
    locker.on('error', () => {});
    await locker.connect();
    const doomed = workers[0] as { proc: StampgateProcess; owner: string };
    let middle: Promise<void>;
    let replacement: StampgateProcess;
    let lockedAt: number;
    let killedAt: number;
    let unfinishedAtKill: number;
    try {
      await locker.query('begin');
      await locker.query('lock table nullifier_holds in share mode');
      middle = submitUpTo(350);
      middle.catch(() => {}); // awaited below; this only keeps it from counting as unhandled meanwhile
      lockedAt = Date.now();
      await waitUntil('worker A to hold jobs', 60_000, () => {
        const open = unfinishedCount(doomed.proc);
        const quiet = Date.now() - doomed.proc.lastOutputAt >= 300;
        const full = open >= CONCURRENCY || (open >= 1 && Date.now() - lockedAt > 5000);
        return full && quiet ? true : undefined;
      }, 20);
      unfinishedAtKill = unfinishedCount(doomed.proc);
      killedAt = Date.now();
      doomed.proc.child.kill('SIGKILL');
      const killExit = await doomed.proc.exited;
      killed = { ...doomed, at: killedAt, unfinishedAtKill };
      expect(killExit.signal).toBe('SIGKILL');
      replacement = startWorker('worker-C');
      await locker.query('commit');
    } finally {
      await locker.end().catch(() => {});
    }
    console.log(`worker A killed holding ${unfinishedAtKill} job(s) after the completions were held for ${killedAt - lockedAt} ms`);
    mark('completions held until the kill', lockedAt);

    since = Date.now();
    await middle;
    await submitUpTo(SUBMISSIONS);
    mark('last 300 submissions', since);

    expect({ refused, apiErrors: problemLines(api.map((a) => a.proc), 50) }).toEqual({ refused: [], apiErrors: [] });
    expect((answered.DONE ?? 0) + (answered.PROCESSING ?? 0)).toBe(SUBMISSIONS);
    // SUBMIT_WAIT_MS=20 and no worker in the API processes: most answers are PROCESSING.
    expect(answered.PROCESSING ?? 0).toBeGreaterThan(SUBMISSIONS / 2);

    since = Date.now();
    type Item = { address: string; score: string | null; status: string; error: string | null };
    let poll = 0;
    const items = await waitUntil('every submitted address to be DONE', 120_000, async () => {
      const target = api[poll++ % 2] as { port: number };
      const res = await request(target.port, 'GET', `/registry/score/${scorer.id}?limit=1000`, tier4.key);
      expect(res.status).toBe(200);
      const list = res.body as { items: Item[]; count: number };
      const errors = list.items.filter((item) => item.status === 'ERROR');
      if (errors.length > 0) throw new Error(`scores in ERROR: ${JSON.stringify(errors.slice(0, 3))}`);
      return list.count === ADDRESSES && list.items.every((item) => item.status === 'DONE') ? list.items : undefined;
    }, 250);
    mark('until every score DONE after the last submission', since);
    workers.push({ proc: replacement, owner: await workerOwner(replacement) });

    // Expected scores: the engine over the stamps issued here and the final nullifier holds
    // (they decide which member of a sharing group got the shared stamp), cross-checked with a
    // plain sum of catalogue weights.
    const holdRows = await db.query<{ nullifier: string; address: string; expires_at: string }>(
      'select nullifier, address, expires_at from nullifier_holds where scorer_id = $1',
      [scorer.id],
    );
    const holds = new Map<string, NullifierHold>(
      holdRows.rows.map((h) => [h.nullifier, { address: h.address, expiresAt: new Date(Number(h.expires_at)) }]),
    );
    const serviceScores = new Map(items.map((item) => [item.address, item.score]));
    const mismatches = scoreMismatches({ wallets, groups, holds, scorer, weightOf, serviceScores });
    expect(mismatches).toEqual([]);

    // Deduplication: each shared nullifier is held by exactly one member of its group, which got
    // the shared provider's points; the others got them only through a stamp of their own.
    for (const group of groups) {
      const holder = holds.get(group.nullifier)?.address;
      expect(group.members).toContain(holder);
    }
    const remaining = await db.query('select count(*)::int as n from scoring_jobs');
    expect(remaining.rows[0].n).toBe(0);
    // No failed attempt either (a worker logs each one as a warning).
    expect(problemLines(workers.map((w) => w.proc), 40)).toEqual([]);
  });

  it('shares the tier-1 budget of 125 requests across both API processes (Redis)', async () => {
    const address = (wallets[0] as Wallet).address;
    const remaining: number[] = [];
    for (let i = 0; i < TIER1_BUDGET; i++) {
      const target = api[i % 2] as { proc: StampgateProcess; port: number };
      const res = await request(target.port, 'GET', `/registry/score/${scorer.id}/${address}`, tier1.key);
      expect(res.status, `request ${i + 1} on ${target.proc.label}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe(String(TIER1_BUDGET));
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    // One counter: every remaining value from 124 down to 0 exactly once.
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: TIER1_BUDGET }, (_, i) => i));
    for (const target of api) {
      const res = await request(target.port, 'GET', `/registry/score/${scorer.id}/${address}`, tier1.key);
      expect(res.status, `request 126+ on ${target.proc.label}`).toBe(429);
      expect(res.body.code).toBe('rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('stops every process with exit code 0 within 15 s of SIGTERM', async () => {
    const running = processes.filter((p) => !p.exit);
    expect(running.map((p) => p.label).sort()).toEqual(['api-1', 'api-2', 'worker-B', 'worker-C']);
    const sentAt = Date.now();
    for (const proc of running) proc.child.kill('SIGTERM');
    const exits = await Promise.all(running.map((p) => withTimeout(p.exited, SHUTDOWN_LIMIT_MS + 5000, `${p.label} after SIGTERM`)));
    const summary = running.map((p, i) => ({ label: p.label, code: exits[i]?.code, signal: exits[i]?.signal, ms: (exits[i]?.at ?? 0) - sentAt }));
    console.log(`exits after SIGTERM: ${JSON.stringify(summary)}`);
    for (const s of summary) {
      expect({ label: s.label, code: s.code, signal: s.signal }).toEqual({ label: s.label, code: 0, signal: null });
      expect(s.ms).toBeLessThan(SHUTDOWN_LIMIT_MS);
    }
    const owners = workers.map((w) => w.owner);
    const claimed = await db.query('select count(*)::int as n from scoring_jobs where lease_owner = any($1)', [owners]);
    expect(claimed.rows[0].n).toBe(0);
  });

  it("workers' logs: no two runs of one (scorer, address) overlap, and a killed worker's jobs wait for the lease", async () => {
    expect(killed, 'the kill happened').not.toBeNull();
    const victim = killed as NonNullable<typeof killed>;
    await Promise.all(workers.map((w) => w.proc.closed));
    const all: Run[] = [];
    let victimUnfinished: Run[] = [];
    for (const worker of workers) {
      const isVictim = worker.proc === victim.proc;
      const { runs, unfinished } = runsOf(worker.proc, isVictim ? victim.at : Number.POSITIVE_INFINITY);
      expect(new Set(runs.map((r) => r.owner)), worker.proc.label).toEqual(new Set(runs.length ? [worker.owner] : []));
      if (isVictim) victimUnfinished = unfinished;
      else expect(unfinished, `${worker.proc.label} left runs unfinished`).toEqual([]);
      all.push(...runs);
    }
    // The kill caught jobs in hand (the scenario this test is about).
    expect(victimUnfinished.length).toBe(victim.unfinishedAtKill);
    expect(victimUnfinished.length).toBeGreaterThan(0);

    const byKey = runsByJob(all);
    const { overlaps, closestGap } = overlapsOf(byKey);
    expect(overlaps).toEqual([]);

    const takeovers = takeoversOf(victimUnfinished, byKey, LEASE_MS);
    for (const takeover of takeovers) {
      expect(takeover.afterLeaseEndMs, `${takeover.key} was never taken over`).not.toBeNull();
      expect(takeover.afterLeaseEndMs as number, `${takeover.key} taken over before its lease ran out`).toBeGreaterThanOrEqual(0);
    }
    const perWorker = Object.fromEntries(workers.map((w) => [w.proc.label, all.filter((r) => r.owner === w.owner).length]));
    const outcomes: Record<string, number> = {};
    for (const run of all) outcomes[run.outcome ?? 'killed'] = (outcomes[run.outcome ?? 'killed'] ?? 0) + 1;
    console.log(
      `worker runs ${JSON.stringify(perWorker)}, outcomes ${JSON.stringify(outcomes)}, ` +
        `closest gap between runs of one job ${closestGap} ms, takeovers of the killed worker's jobs ${JSON.stringify(takeovers)}`,
    );
  });
});
