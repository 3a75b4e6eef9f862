/// <reference path="../bench/autocannon.d.ts" />
/**
 * `npm run loadtest`: a mixed workload for a fixed time against real `stampgate` processes started
 * here as child processes, first on SQLite, then on PostgreSQL + Redis.
 *
 *   sqlite     1 `serve` (HTTP + its in-process scoring worker), SQLite file
 *   postgres   LOADTEST_API_PROCESSES (2) `serve --no-worker` API processes (no proxy: the connections
 *              are split between them) + 1 `worker`, one PostgreSQL database, REDIS_URL set (shared rate limits)
 *
 * Workload, per request (autocannon, one `requests` entry whose setupRequest draws the kind by
 * weight, so the mix holds by request count whatever each kind's latency):
 *   70 %  GET  /registry/score/{scorer_id}/{address}          single score, random seeded address
 *   20 %  GET  /registry/score/{scorer_id}?limit=50&offset=n  score-list page, random offset
 *   10 %  POST /registry/submit-passport                       re-submission of a seeded address
 * Seed: LOADTEST_ADDRESSES addresses with LOADTEST_STAMPS verified stamps each (development
 * issuer; imported with `stampgate stamps import`), all submitted and scored before measuring.
 * A tier-4 key with RATE_LIMIT_TIER4=100000000; any 429 is counted apart ("intended"), never as an error.
 *
 * Environment (all optional)
 *   LOADTEST_SECONDS          measured seconds per configuration (20)
 *   LOADTEST_WARMUP_SECONDS   discarded warm-up before measuring (3)
 *   LOADTEST_CONNECTIONS      concurrent connections in total, split between API processes (10)
 *   LOADTEST_ADDRESSES        seeded and scored addresses (1000)
 *   LOADTEST_STAMPS           stamps per address (3)
 *   LOADTEST_CONFIGS          comma list of sqlite,postgres (both)
 *   LOADTEST_API_PROCESSES    API processes of the postgres configuration (2); e.g. 4 to see how reads scale with processes
 *   LOADTEST_POSTGRES_URL     server for the throw-away database (postgres://postgres@127.0.0.1:5432/test)
 *   LOADTEST_REDIS_URL        (redis://127.0.0.1:6379)
 *   LOADTEST_BATCH_ADDRESSES  a second measured window runs while a batch of this many fresh addresses
 *                             is being scored by the same processes (100000; 0 = no second window),
 *                             to show that batches do not slow the mix down (loadtest/batch-window.ts)
 *   LOADTEST_CPU_PROF=1       V8 CPU profile of every server process, in loadtest/results/profiles/
 *                             (summarise with `npx tsx bench/profile-summary.ts <that directory>`)
 * Any Stampgate setting in the environment (SUBMIT_WAIT_MS, SCORING_POLL_MS, LOG_LEVEL, …) is
 * passed to the servers; LOG_LEVEL defaults to warn here (no per-request log lines).
 *
 * Output: a table per configuration and route kind (req/s, p50, p99, errors, 429s) and
 * loadtest/results/latest.json. Exit code 1 when a request failed (non-2xx other than 429, socket
 * error, timeout), a server logged an error, or a configuration could not run; the latency target
 * (reads p99 < 50 ms) is reported, not enforced.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { describeSettings } from '../src/config/index.js';
import { issueCredential, loadOrCreateIssuerKey } from '../src/scoring/stamps/dev-issuer.js';
import { buildCli, freePort } from '../test/helpers/processes.js';
import { type BatchWindow, batchWindowLine, whileBatchRuns } from './batch-window.js';

const repoDir = fileURLToPath(new URL('..', import.meta.url));
const resultsDir = join(repoDir, 'loadtest', 'results');
const DAY = 86_400_000;

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}=${raw} must be a whole number ≥ ${min}`);
  return value;
}

type ConfigName = 'sqlite' | 'postgres';

const settings = {
  seconds: intFromEnv('LOADTEST_SECONDS', 20, 1),
  warmupSeconds: intFromEnv('LOADTEST_WARMUP_SECONDS', 3, 0),
  connections: intFromEnv('LOADTEST_CONNECTIONS', 10, 2),
  addresses: intFromEnv('LOADTEST_ADDRESSES', 1000, 60),
  stampsPerAddress: intFromEnv('LOADTEST_STAMPS', 3, 1),
  configs: ((process.env.LOADTEST_CONFIGS ?? '').trim() || 'sqlite,postgres').split(',').map((c) => c.trim()) as ConfigName[],
  postgresUrl: process.env.LOADTEST_POSTGRES_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: process.env.LOADTEST_REDIS_URL?.trim() || 'redis://127.0.0.1:6379',
  cpuProfile: process.env.LOADTEST_CPU_PROF === '1',
  batchAddresses: intFromEnv('LOADTEST_BATCH_ADDRESSES', 100_000, 0),
  apiProcesses: intFromEnv('LOADTEST_API_PROCESSES', 2, 1),
};
for (const c of settings.configs) if (c !== 'sqlite' && c !== 'postgres') throw new Error(`LOADTEST_CONFIGS: unknown ${c} (sqlite, postgres)`);

const READ_P99_TARGET_MS = 50;
const kinds = ['read', 'list', 'submit'] as const;
type Kind = (typeof kinds)[number];
const kindLabels: Record<Kind, string> = {
  read: 'GET score/{id}/{address}',
  list: 'GET score/{id}?limit=50',
  submit: 'POST submit-passport',
};
const weights: [Kind, number][] = [
  ['read', 0.7],
  ['list', 0.2],
  ['submit', 0.1],
];

// ---------------------------------------------------------------------------
// Processes

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

class Proc {
  readonly lines: string[] = [];
  readonly stderr: string[] = [];
  exit: Exit | null = null;
  readonly exited: Promise<Exit>;
  #partial = '';

  constructor(
    readonly label: string,
    readonly child: ChildProcess,
  ) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      const parts = (this.#partial + chunk).split('\n');
      this.#partial = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.stderr.push(chunk));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  tail(): string {
    return [`--- ${this.label} stdout`, ...this.lines.slice(-10), `--- ${this.label} stderr`, this.stderr.join('').slice(-2000)].join('\n');
  }

  /** Log lines at error level or above. */
  errorLines(): string[] {
    return this.lines.filter((line) => line.startsWith('{') && (JSON.parse(line) as { level?: number }).level! >= 50);
  }
}


let cliPath = '';
const running: Proc[] = [];
/** Drops the PostgreSQL database of the configuration under way (also on Ctrl-C). */
let dropCurrentDatabase: (() => Promise<void>) | null = null;

function baseEnv(settingsForRun: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  const controlled = new Set(['STAMPGATE_ENV', 'DATA_DIR', 'DATABASE_URL', 'REDIS_URL', 'HOST', 'PORT', 'RATE_LIMIT_TIER4']);
  for (const { name } of describeSettings()) if (controlled.has(name)) delete env[name];
  return { LOG_LEVEL: 'warn', ...env, ...settingsForRun };
}

function startProc(label: string, args: string[], env: NodeJS.ProcessEnv, profileDir: string | null): Proc {
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const proc = new Proc(label, spawn(process.execPath, [...nodeArgs, cliPath, ...args], { cwd: repoDir, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  running.push(proc);
  return proc;
}

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const proc = startProc(`stampgate ${args[0]}`, args, env, null);
  const exit = await proc.exited;
  await new Promise((r) => setImmediate(r));
  if (exit.code !== 0) throw new Error(`stampgate ${args.join(' ')} failed ${JSON.stringify(exit)}\n${proc.tail()}`);
  return proc.lines.join('\n');
}


async function waitUntil(what: string, timeoutMs: number, probe: () => Promise<boolean> | boolean, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function stopAll(procs: Proc[]): Promise<{ label: string; code: number | null; signal: string | null }[]> {
  for (const proc of procs) if (!proc.exit) proc.child.kill('SIGTERM');
  return Promise.all(
    procs.map(async (proc) => {
      const exit = await Promise.race([proc.exited, new Promise<null>((r) => setTimeout(() => r(null), 20_000))]);
      if (!exit) proc.child.kill('SIGKILL');
      return { label: proc.label, code: exit?.code ?? null, signal: exit?.signal ?? 'SIGKILL (no exit within 20 s)' };
    }),
  );
}

// ---------------------------------------------------------------------------
// CPU accounting (Linux /proc; null elsewhere)

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1000;
  } catch {
    return null;
  }
}

/** Ids of the PostgreSQL backends serving `database` (their command line names it). */
function postgresBackends(database: string): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(` ${database} `);
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

function machineCpu(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] as string;
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    const total = values.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// Load

interface KindStats {
  latencies: number[];
  statusCodes: Record<string, number>;
}

interface KindResult {
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  ok: number;
  /** Non-2xx other than 429. */
  errors: number;
  rateLimited: number;
  statusCodes: Record<string, number>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

function summarise(stats: KindStats, seconds: number): KindResult {
  const sorted = [...stats.latencies].sort((a, b) => a - b);
  const count = (pred: (code: number) => boolean) =>
    Object.entries(stats.statusCodes).reduce((n, [code, c]) => (pred(Number(code)) ? n + c : n), 0);
  return {
    requests: sorted.length,
    rps: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
    mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : Number.NaN,
    ok: count((c) => c >= 200 && c < 300),
    errors: count((c) => (c < 200 || c >= 300) && c !== 429),
    rateLimited: count((c) => c === 429),
    statusCodes: stats.statusCodes,
  };
}

interface Workload {
  scorerId: number;
  key: string;
  addresses: string[];
}

function pickKind(): Kind {
  let r = Math.random();
  for (const [kind, weight] of weights) {
    if (r < weight) return kind;
    r -= weight;
  }
  return 'read';
}

/**
 * Runs the mix against every port at once (connections split evenly) for `seconds`. The kind of
 * each request is drawn in setupRequest and kept in the connection's context; onResponse (which
 * gets the context) and autocannon's `response` event (which gets the latency) fire one right
 * after the other for the same response, which pairs them.
 */
async function fire(ports: number[], workload: Workload, seconds: number) {
  const stats = Object.fromEntries(kinds.map((k) => [k, { latencies: [] as number[], statusCodes: {} as Record<string, number> }])) as Record<Kind, KindStats>;
  let socketErrors = 0;
  let timeouts = 0;
  const firstErrors: string[] = [];
  const lastOffset = Math.max(0, workload.addresses.length - 50);
  const randomAddress = () => workload.addresses[Math.floor(Math.random() * workload.addresses.length)] as string;
  const instances = ports.map((port, i) => {
    let answered: Kind | null = null;
    const connections = Math.floor(settings.connections / ports.length) + (i < settings.connections % ports.length ? 1 : 0);
    const instance = autocannon({
      url: `http://127.0.0.1:${port}`,
      connections,
      duration: seconds,
      timeout: 30,
      requests: [
        {
          setupRequest: (request, context) => {
            const kind = pickKind();
            context.kind = kind;
            const headers: Record<string, string> = { 'x-api-key': workload.key };
            if (kind === 'submit') {
              headers['content-type'] = 'application/json';
              return { ...request, method: 'POST', path: '/registry/submit-passport', headers, body: JSON.stringify({ address: randomAddress(), scorer_id: String(workload.scorerId) }) };
            }
            const path =
              kind === 'read'
                ? `/registry/score/${workload.scorerId}/${randomAddress()}`
                : `/registry/score/${workload.scorerId}?limit=50&offset=${Math.floor(Math.random() * (lastOffset + 1))}`;
            return { ...request, method: 'GET', path, headers, body: undefined };
          },
          onResponse: (status, body, context) => {
            answered = context.kind as Kind;
            if ((status < 200 || status >= 300) && status !== 429 && firstErrors.length < 5) firstErrors.push(`${context.kind} ${status} ${body.slice(0, 200)}`);
          },
        },
      ],
    });
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      const kind = answered ?? 'read';
      answered = null;
      stats[kind].latencies.push(ms);
      stats[kind].statusCodes[status] = (stats[kind].statusCodes[status] ?? 0) + 1;
    });
    instance.on('reqError', (error: Error) => {
      socketErrors++;
      if (firstErrors.length < 5) firstErrors.push(`socket: ${error.message}`);
    });
    instance.on('timeout', () => {
      timeouts++;
    });
    return instance;
  });
  const results = await Promise.all(instances);
  const duration = Math.max(...results.map((r) => r.duration));
  return { stats, duration, socketErrors, timeouts, firstErrors };
}

// ---------------------------------------------------------------------------
// One configuration

interface ConfigResult {
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

async function createPostgresDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
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

async function runConfig(name: ConfigName, tmp: string, dataDir: string, stampsFile: string, addresses: string[]): Promise<ConfigResult> {
  const setupMs: Record<string, number> = {};
  let since = Date.now();
  const database = name === 'postgres' ? await createPostgresDatabase() : null;
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
    if (settings.warmupSeconds > 0) await fire(ports, workload, settings.warmupSeconds);

    const serverPids = Object.fromEntries(procs.map((p) => [p.label, p.pid]));
    const backends = database ? postgresBackends(database.name) : [];
    const cpuBefore = Object.fromEntries(Object.entries(serverPids).map(([label, pid]) => [label, processCpuMs(pid)]));
    const backendsBefore = backends.map(processCpuMs);
    const machineBefore = machineCpu();
    const generatorBefore = process.cpuUsage();
    const load = await fire(ports, workload, settings.seconds);
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
    const withBatch = settings.batchAddresses > 0
      ? await whileBatchRuns(ports[0] as number, scorer.id, key, settings.batchAddresses, async () => {
          const load = await fire(ports, workload, settings.seconds);
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
      scoresAfter,
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

async function allDone(port: number, scorerId: number, key: string, total: number): Promise<boolean> {
  const counts = await statusCounts(port, scorerId, key, total);
  return counts.DONE === total;
}

// ---------------------------------------------------------------------------
// Report

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r, ri) => {
      const line = r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
      return ri === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

function loadText(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const loadAtStart = loadavg();
  const tmp = mkdtempSync(join(tmpdir(), 'stampgate-loadtest-'));
  const results: ConfigResult[] = [];
  const problems: string[] = [];
  const onSignal = () => {
    for (const proc of running) if (!proc.exit) proc.child.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
    const drop = dropCurrentDatabase ? dropCurrentDatabase().catch(() => {}) : Promise.resolve();
    void Promise.race([drop, new Promise((r) => setTimeout(r, 5000))]).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  console.log(
    `Stampgate load test: ${settings.seconds} s per configuration (after ${settings.warmupSeconds} s warm-up), ${settings.connections} connections, ` +
      `${settings.addresses} addresses × ${settings.stampsPerAddress} stamps; ${cpus().length} CPUs, Node ${process.version}, load average ${loadText()}`,
  );
  try {
    mkdirSync(join(tmp, 'build'));
    cliPath = await buildCli(join(tmp, 'build'));

    // Stamps: the development issuer's key in the DATA_DIR every process shares.
    const dataDir = join(tmp, 'data');
    const privateKey = await loadOrCreateIssuerKey(dataDir);
    const catalogue = JSON.parse(readFileSync(join(repoDir, 'assets', 'stamp-catalogue.json'), 'utf8')) as {
      platforms: { groups: { stamps: { name: string; weight: string; deprecated?: boolean }[] }[] }[];
    };
    const providers = catalogue.platforms
      .flatMap((p) => p.groups.flatMap((g) => g.stamps))
      .filter((s) => !s.deprecated && Number(s.weight) > 0)
      .map((s) => s.name);
    const addresses = Array.from({ length: settings.addresses }, () => `0x${randomBytes(20).toString('hex')}`);
    const expiresAt = new Date(Date.now() + 90 * DAY);
    const documents = addresses.map((address, i) => ({
      address,
      credentials: Array.from({ length: settings.stampsPerAddress }, (_, j) =>
        issueCredential({ privateKey, address, provider: providers[(i + j * 7) % providers.length] as string, expiresAt }),
      ),
    }));
    const stampsFile = join(tmp, 'stamps.json');
    writeFileSync(stampsFile, JSON.stringify(documents));

    for (const name of settings.configs) {
      process.stdout.write(`${name}: set-up, priming ${settings.addresses} scores, warm-up, ${settings.seconds} s measured … `);
      try {
        const result = await runConfig(name, tmp, dataDir, stampsFile, addresses);
        results.push(result);
        console.log(`done (set-up ${JSON.stringify(result.setupMs)})`);
      } catch (error) {
        console.log('failed');
        problems.push(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    }
  } finally {
    for (const proc of running) if (!proc.exit) proc.child.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  }

  const rows: string[][] = [['configuration', 'route', 'req/s', 'p50 ms', 'p99 ms', 'errors', '429 (intended)']];
  for (const r of results) {
    for (const [i, k] of [...kinds, 'all' as const].entries()) {
      const s = k === 'all' ? r.all : r.kinds[k];
      const errors = s.errors + (k === 'all' ? r.socketErrors + r.timeouts : 0);
      rows.push([i === 0 ? r.title : '', k === 'all' ? 'all (socket errors/timeouts included)' : kindLabels[k], fixed(s.rps, 0), fixed(s.p50, 2), fixed(s.p99, 2), String(errors), String(s.rateLimited)]);
    }
  }
  console.log('');
  console.log(table(rows));
  console.log('');
  for (const r of results) {
    console.log(
      `${r.name}: CPU during the ${fixed(r.window.seconds, 0)} s window: ` +
        `${Object.entries(r.window.serverCpuMs).map(([label, ms]) => `${label} ${ms ?? 'n/a'} ms`).join(', ')}` +
        `${r.window.postgresBackendsCpuMs !== null ? `, PostgreSQL backends ${r.window.postgresBackendsCpuMs} ms` : ''}` +
        `, load generator ${r.window.loadGeneratorCpuMs} ms; whole machine ${r.window.machineCpuBusyPercent ?? 'n/a'} % busy`,
    );
  }

  for (const r of results) if (r.withBatch) console.log(batchWindowLine(r.name, r.kinds, r.withBatch, kindLabels));

  const targets = results.flatMap((r) =>
    (['read', 'list'] as const).map((k) => ({
      name: `${r.name}: ${kindLabels[k]} p99 < ${READ_P99_TARGET_MS} ms`,
      verdict: r.kinds[k].p99 < READ_P99_TARGET_MS ? 'PASS' : 'FAIL',
      measured: `p99 ${fixed(r.kinds[k].p99, 2)} ms at ${fixed(r.kinds[k].rps, 0)} req/s`,
    })),
  );
  for (const r of results) {
    targets.push({
      name: `${r.name}: no errors other than intended 429s`,
      verdict: r.all.errors + r.socketErrors + r.timeouts === 0 ? 'PASS' : 'FAIL',
      measured: `${r.all.errors} non-2xx (not 429), ${r.socketErrors} socket errors, ${r.timeouts} timeouts`,
    });
  }
  for (const t of targets) console.log(`${t.verdict.padEnd(5)} ${t.name}: ${t.measured}`);
  console.log(`(load average at the start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at the end ${loadText()}; figures from a busy machine are not comparable)`);

  for (const r of results) {
    if (r.all.errors > 0 || r.socketErrors > 0 || r.timeouts > 0) problems.push(`${r.name}: failed requests; first: ${r.firstErrors.join(' | ')}`);
    if (r.serverErrorLines.length > 0) problems.push(`${r.name}: servers logged ${r.serverErrorLines.length} error(s); first: ${r.serverErrorLines[0]}`);
    if (r.scoresAfter.DONE !== settings.addresses) problems.push(`${r.name}: scores after the run ${JSON.stringify(r.scoresAfter)}`);
    for (const exit of r.exits) if (exit.code !== 0) problems.push(`${r.name}: ${exit.label} exited ${JSON.stringify(exit)} after SIGTERM`);
  }

  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    commit = null;
  }
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, 'latest.json');
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        commit,
        machine: { node: process.version, platform: process.platform, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, memoryBytes: totalmem() },
        loadAverage: { start: loadAtStart, end: loadavg() },
        settings: { ...settings, postgresUrl: settings.postgresUrl.replace(/\/\/[^@/]*@/, '//…@'), mix: Object.fromEntries(weights) },
        configurations: results.map((r) => ({ ...r, kinds: r.kinds })),
        targets,
        problems,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nresults written to ${file}`);
  if (problems.length > 0) {
    console.error('\nProblems:');
    for (const p of problems) console.error(`  - ${p}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    for (const proc of running) if (!proc.exit) proc.child.kill('SIGKILL');
    process.exit(1);
  },
);
