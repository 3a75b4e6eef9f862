/**
 * One configuration of the load test from start to finish: a throw-away database, the CLI set-up
 * (account, scorer, key, stamps), the server processes, priming every score, the warm-up, the
 * measured window with its CPU accounting, the optional window under a batch, and the tear-down.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../test/helpers/processes.js';
import { type BatchWindow, whileBatchRuns } from './batch-window.js';
import { machineCpu, postgresBackends, processCpuMs } from './cpu.js';
import { type ConfigName, type Kind, type LoadtestSettings, type Workload, kinds, resultsDir } from './definitions.js';
import { type KindResult, type KindStats, fire, summarise } from './load.js';
import { Proc, baseEnv, cli, startProc, stopAll, waitUntil } from './processes.js';

/** Drops the PostgreSQL database of the configuration under way (also on Ctrl-C). */
export let dropCurrentDatabase: (() => Promise<void>) | null = null;

export interface ConfigResult {
  name: ConfigName;
  title: string;
  processes: string[];
  setupMs: Record<string, number>;
  window: {
    seconds: number;
    machineCpuBusyPercent: number | null;
    loadGeneratorCpuMs: number;
    serverCpuMs: Record<string, number | null>;
    postgresBackendsCpuMs: number | null;
  };
  kinds: Record<Kind, KindResult>;
  all: KindResult;
  socketErrors: number;
  timeouts: number;
  firstErrors: string[];
  serverErrorLines: string[];
  scoresAfter: Record<string, number>;
  /** When some score is not DONE after the wait (PostgreSQL): the queue's jobs then, to tell a stuck job from a slow one. */
  jobsLeft: Record<string, unknown>[] | null;
  /** The servers' warnings (a failed job attempt is one), reported with a score left unfinished. */
  serverWarningLines: string[];
  /** The mix again while a batch is scored (LOADTEST_BATCH_ADDRESSES), or null. */
  withBatch: BatchWindow<{ seconds: number; kinds: Record<Kind, KindResult> }> | null;
  exits: { label: string; code: number | null; signal: string | null }[];
}

async function http(port: number, method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function createPostgresDatabase(settings: LoadtestSettings): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: settings.postgresUrl, connectionTimeoutMillis: 3000 });
  await admin.connect();
  const name = `stampgate_load_${Date.now()}_${process.pid}`;
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(settings.postgresUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const dropper = new pg.Client({ connectionString: settings.postgresUrl, connectionTimeoutMillis: 3000 });
      await dropper.connect();
      try {
        await dropper.query(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

export async function runConfig(settings: LoadtestSettings, name: ConfigName, tmp: string, dataDir: string, stampsFile: string, addresses: string[]): Promise<ConfigResult> {
  const setupMs: Record<string, number> = {};
  let since = Date.now();
  const database = name === 'postgres' ? await createPostgresDatabase(settings) : null;
  dropCurrentDatabase = database ? () => database.drop() : null;
  const common = {
    STAMPGATE_ENV: 'development',
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    RATE_LIMIT_TIER4: '100000000',
    DATABASE_URL: database ? database.url : `sqlite:${join(tmp, `${name}.sqlite`)}`,
    ...(name === 'postgres' ? { REDIS_URL: settings.redisUrl } : {}),
  };
  const env = baseEnv(common);
  const profileRoot = settings.cpuProfile ? join(resultsDir, 'profiles', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`) : null;
  const procs: Proc[] = [];
  try {
    const account = JSON.parse(await cli(['accounts', 'create', '--name', 'Load test', '--json'], env)) as { id: number };
    const [scorerOut, keyOut, importOut] = await Promise.all([
      cli(['scorers', 'create', '--account', String(account.id), '--name', 'Load test', '--type', 'weighted', '--json'], env),
      cli(['keys', 'create', '--account', String(account.id), '--tier', '4', '--name', 'load', '--json'], env),
      cli(['stamps', 'import', stampsFile, '--json'], env),
    ]);
    const scorer = JSON.parse(scorerOut) as { id: number };
    const { key } = JSON.parse(keyOut) as { key: string };
    const imported = JSON.parse(importOut) as { stored: number; rejected: number };
    if (imported.stored !== addresses.length * settings.stampsPerAddress || imported.rejected !== 0) {
      throw new Error(`stamps import: ${JSON.stringify({ stored: imported.stored, rejected: imported.rejected })}`);
    }
    setupMs.cliSetup = Date.now() - since;

    since = Date.now();
    const apiCount = name === 'postgres' ? settings.apiProcesses : 1;
    const ports: number[] = [];
    for (let i = 0; i < apiCount; i++) {
      const port = await freePort();
      ports.push(port);
      const label = name === 'postgres' ? `api-${i + 1}` : 'serve';
      const dir = profileRoot ? join(profileRoot, label) : null;
      if (dir) mkdirSync(dir, { recursive: true });
      procs.push(startProc(label, name === 'postgres' ? ['serve', '--no-worker'] : ['serve'], { ...env, PORT: String(port) }, dir));
    }
    if (name === 'postgres') {
      const dir = profileRoot ? join(profileRoot, 'worker') : null;
      if (dir) mkdirSync(dir, { recursive: true });
      const worker = startProc('worker', ['worker'], env, dir);
      procs.push(worker);
      await waitUntil('the worker to start', 180_000, () => {
        if (worker.exit) throw new Error(`worker exited\n${worker.tail()}`);
        return worker.lines.some((l) => l.startsWith('Scoring worker '));
      });
    }
    for (const [i, port] of ports.entries()) {
      const proc = procs[i] as Proc;
      await waitUntil(`${proc.label} to be ready`, 180_000, async () => {
        if (proc.exit) throw new Error(`${proc.label} exited\n${proc.tail()}`);
        const res = await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null);
        return res?.status === 200;
      });
    }
    setupMs.processesUp = Date.now() - since;

    // Every address scored once before measuring.
    since = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async (_, lane) => {
        while (next < addresses.length) {
          const address = addresses[next++] as string;
          const res = await http(ports[lane % ports.length] as number, 'POST', '/registry/submit-passport', key, { address, scorer_id: String(scorer.id) });
          if (res.status !== 200) throw new Error(`priming ${address}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
        }
      }),
    );
    await waitUntil('every seeded address to be scored', 300_000, () => allDone(ports[0] as number, scorer.id, key, addresses.length), 250);
    setupMs.primeAllScores = Date.now() - since;

    const workload: Workload = { scorerId: scorer.id, key, addresses };
    if (settings.warmupSeconds > 0) await fire(ports, workload, settings.warmupSeconds, settings.connections);

    const serverPids = Object.fromEntries(procs.map((p) => [p.label, p.pid]));
    const backends = database ? postgresBackends(database.name) : [];
    const cpuBefore = Object.fromEntries(Object.entries(serverPids).map(([label, pid]) => [label, processCpuMs(pid)]));
    const backendsBefore = backends.map(processCpuMs);
    const machineBefore = machineCpu();
    const generatorBefore = process.cpuUsage();
    const load = await fire(ports, workload, settings.seconds, settings.connections);
    const generator = process.cpuUsage(generatorBefore);
    const machineAfter = machineCpu();
    const serverCpuMs = Object.fromEntries(
      Object.entries(serverPids).map(([label, pid]) => {
        const after = processCpuMs(pid);
        const before = cpuBefore[label];
        return [label, after === null || before === null || before === undefined ? null : Math.round(after - before)];
      }),
    );
    const backendsAfter = backends.map(processCpuMs);
    // Backends that came or went during the window are left out (their share is unknown).
    const postgresBackendsCpuMs = database
      ? Math.round(
          backendsAfter.reduce<number>((sum, after, i) => {
            const before = backendsBefore[i];
            return after === null || before === null || before === undefined ? sum : sum + (after - before);
          }, 0),
        )
      : null;

    // Scoring keeps going for submissions that answered PROCESSING; wait for it, then look.
    await waitUntil('the last submissions to be scored', 30_000, async () => allDone(ports[0] as number, scorer.id, key, addresses.length), 250).catch(() => {});
    const scoresAfter = await statusCounts(ports[0] as number, scorer.id, key, addresses.length);
    const jobsLeft = database && scoresAfter.DONE !== addresses.length ? await queuedJobs(database.url).catch((error: unknown) => [{ error: String(error) }]) : null;
    const withBatch = settings.batchAddresses > 0
      ? await whileBatchRuns(ports[0] as number, scorer.id, key, settings.batchAddresses, async () => {
          const load = await fire(ports, workload, settings.seconds, settings.connections);
          return { seconds: load.duration, kinds: Object.fromEntries(kinds.map((k) => [k, summarise(load.stats[k], load.duration)])) as Record<Kind, KindResult> };
        })
      : null;

    const perKind = Object.fromEntries(kinds.map((k) => [k, summarise(load.stats[k], load.duration)])) as Record<Kind, KindResult>;
    const merged: KindStats = { latencies: kinds.flatMap((k) => load.stats[k].latencies), statusCodes: {} };
    for (const k of kinds) for (const [code, n] of Object.entries(load.stats[k].statusCodes)) merged.statusCodes[code] = (merged.statusCodes[code] ?? 0) + n;
    const exits = await stopAll(procs);
    return {
      name,
      title: name === 'sqlite' ? 'SQLite: 1 serve (in-process worker)' : `PostgreSQL+Redis: ${settings.apiProcesses} serve --no-worker + 1 worker`,
      processes: procs.map((p) => p.label),
      setupMs,
      window: {
        seconds: load.duration,
        machineCpuBusyPercent:
          machineBefore && machineAfter ? Math.round(((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 1000) / 10 : null,
        loadGeneratorCpuMs: Math.round((generator.user + generator.system) / 1000),
        serverCpuMs,
        postgresBackendsCpuMs,
      },
      kinds: perKind,
      all: summarise(merged, load.duration),
      socketErrors: load.socketErrors,
      timeouts: load.timeouts,
      firstErrors: load.firstErrors,
      serverErrorLines: procs.flatMap((p) => p.errorLines().map((l) => `${p.label}: ${l.slice(0, 4000)}`)),
      serverWarningLines: procs.flatMap((p) => p.linesAtLeast(40).map((l) => `${p.label}: ${l.slice(0, 1000)}`)),
      scoresAfter,
      jobsLeft,
      withBatch,
      exits,
    };
  } finally {
    await stopAll(procs);
    await database?.drop().catch((error: unknown) => console.error(`dropping ${database.name}: ${String(error)}`));
    dropCurrentDatabase = null;
  }
}

async function statusCounts(port: number, scorerId: number, key: string, total: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let offset = 0; offset < total; offset += 1000) {
    const res = await http(port, 'GET', `/registry/score/${scorerId}?limit=1000&offset=${offset}`, key);
    for (const item of res.body.items as { status: string }[]) counts[item.status] = (counts[item.status] ?? 0) + 1;
  }
  return counts;
}

async function queuedJobs(url: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    const now = Date.now();
    const jobs = await client.query(
      'select address, state, generation, claimed_generation, attempts, last_error, run_after, lease_expires_at from scoring_jobs order by id limit 20',
    );
    return jobs.rows.map((job) => ({
      ...job,
      run_after: `${Number(job.run_after) - now} ms from now`,
      lease_expires_at: job.lease_expires_at === null ? null : `${Number(job.lease_expires_at) - now} ms from now`,
    }));
  } finally {
    await client.end();
  }
}

async function allDone(port: number, scorerId: number, key: string, total: number): Promise<boolean> {
  const counts = await statusCounts(port, scorerId, key, total);
  return counts.DONE === total;
}
