/**
 * `npm run bench`: throughput and latency of Stampgate's hot paths against a
 * bare Fastify ceiling, on SQLite and PostgreSQL, with autocannon over loopback.
 *
 * Cases
 *   ceiling  bare Fastify 5, one route returning a small JSON object
 *   score    GET /registry/score/{scorer_id}/{address} of DONE scores (rotating over the pool)
 *   submit   POST /registry/submit-passport of addresses holding 20 verified stamps,
 *            in-process scoring worker running, rotating over the pool
 *   bounties GET /api/v0.1/bounties/ over 10,000 bounties with two filters and an order_by,
 *            as served by default (the response cache on: after the first request, cache hits)
 *   bounties-uncached  the same with PUBLIC_CACHE_TTL=0 (a server of its own): every request
 *            runs the query and renders the list, the cost of each cache miss
 *
 * Environment (all optional)
 *   BENCH_SECONDS          measured seconds per case (10)
 *   BENCH_WARMUP_SECONDS   discarded warm-up seconds before each case (2)
 *   BENCH_CONNECTIONS      concurrent connections (10)
 *   BENCH_ADDRESSES        size of the address pool, each with 20 stamps (200)
 *   BENCH_POSTGRES_URL     server for the throw-away database (postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_DATABASES        comma list of sqlite,postgres (both)
 *   BENCH_CASES            comma list of ceiling,score,submit,bounties,bounties-uncached (all)
 *   BENCH_BOUNTIES         bounties seeded for the bounties case (10000)
 *   BENCH_SERVER           child (default: server in its own process) or inprocess
 *   BENCH_CPU_PROF         1 = write a V8 CPU profile of each server child to bench/results/profiles/<server>-<time>/
 *                          (summarise with `npx tsx bench/profile-summary.ts <that directory> <case window>`)
 * Any other Stampgate setting (SUBMIT_WAIT_MS, SCORING_CONCURRENCY, …) is passed through to the server.
 *
 * Results: a table on stdout and bench/results/latest.json.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describeSettings } from '../src/config.js';
import { issueCredential, loadOrCreateIssuerKey } from '../src/scoring/dev-issuer.js';
import { type LoadCase, type LoadResult, runLoad } from './load.js';
import type { DatabaseKind, Op, Reply, Request, ServerUsage, TargetCheck, TargetInfo, TargetSpec } from './protocol.js';
import type { RunningTarget } from './target.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const repoDir = fileURLToPath(new URL('..', import.meta.url));
const resultsDir = join(benchDir, 'results');
const STAMPS_PER_ADDRESS = 20;
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------
// Settings

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}=${raw} must be a whole number ≥ ${min}`);
  return value;
}

function listFromEnv<T extends string>(name: string, allowed: readonly T[]): T[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...allowed];
  const values = raw.split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);
  const bad = values.filter((v) => !allowed.includes(v as T));
  if (bad.length > 0) throw new Error(`${name}: unknown ${bad.join(', ')} (allowed: ${allowed.join(', ')})`);
  return values as T[];
}

function serverMode(): 'child' | 'inprocess' {
  const raw = (process.env.BENCH_SERVER ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'child') return 'child';
  if (raw === 'inprocess') return 'inprocess';
  throw new Error(`BENCH_SERVER=${raw} must be child or inprocess`);
}

const settings = {
  seconds: intFromEnv('BENCH_SECONDS', 10, 1),
  warmupSeconds: intFromEnv('BENCH_WARMUP_SECONDS', 2, 1),
  connections: intFromEnv('BENCH_CONNECTIONS', 10, 1),
  addresses: intFromEnv('BENCH_ADDRESSES', 200, 1),
  postgresUrl: process.env.BENCH_POSTGRES_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres',
  databases: listFromEnv('BENCH_DATABASES', ['sqlite', 'postgres'] as const),
  cases: listFromEnv('BENCH_CASES', ['ceiling', 'score', 'submit', 'bounties', 'bounties-uncached'] as const),
  bounties: intFromEnv('BENCH_BOUNTIES', 10_000, 1),
  server: serverMode(),
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
};

const targets = {
  scoreReadVsCeiling: 0.5,
  submitP50Ms: 10,
  bountiesVsCeiling: 0.25,
};

/** Two filters and an order: open beginner bounties, most valuable first. */
const BOUNTIES_PATH = '/api/v0.1/bounties/?is_open=true&experience_level=beginner&order_by=-value_in_eth&limit=50';

// ---------------------------------------------------------------------------
// Servers under test: a child process (default) or this process

async function launchChild(spec: TargetSpec, label: string): Promise<RunningTarget> {
  const execArgv = ['--import', 'tsx'];
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (settings.cpuProfile) {
    // One directory per server: tsx's module loader runs in a worker thread, which
    // writes a profile of its own (Node's default file names tell the threads apart).
    const dir = join(resultsDir, 'profiles', `${label}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(dir, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
    env.BENCH_PROFILE_WINDOWS_FILE = join(dir, 'windows.json');
    console.log(`(CPU profile of the ${label} server: ${dir})`);
  }
  const child: ChildProcess = fork(join(benchDir, 'child.ts'), [], {
    cwd: repoDir,
    execArgv,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: Reply) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(`server child: ${message.error}`));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`server child exited (code ${code}, signal ${signal})`));
    pending.clear();
  });
  const call = <T>(request: { op: 'start'; spec: TargetSpec } | { op: 'usageStart'; window: string } | { op: Op }): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ ...request, id } as Request);
    });

  try {
    const info = await call<TargetInfo>({ op: 'start', spec });
    return {
      info,
      usageStart: (window) => call<void>({ op: 'usageStart', window }),
      usageStop: () => call<ServerUsage>({ op: 'usageStop' }),
      check: () => call<TargetCheck>({ op: 'check' }),
      stop: async () => {
        try {
          await call<void>({ op: 'stop' });
        } finally {
          if (child.connected) child.disconnect();
          await exited;
        }
      },
    };
  } catch (error) {
    if (child.connected) child.disconnect();
    child.kill();
    await exited;
    throw error;
  }
}

async function launch(spec: TargetSpec, label: string): Promise<RunningTarget> {
  if (settings.server === 'child') return launchChild(spec, label);
  const { startTarget } = await import('./target.js');
  return startTarget(spec);
}

/** Settings the benchmark fixes for the Stampgate server; every other one comes from the environment. */
function serverEnv(dataDir: string, databaseUrl: string): Record<string, string> {
  return {
    STAMPGATE_ENV: 'development',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    // Far above what a run can spend, so the rate limit is exercised but never refuses.
    RATE_LIMIT_TIER4: '100000000',
    // The public data API's per-address budget likewise: the load generator is one address.
    PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
    HOST: '127.0.0.1',
    PORT: '0',
  };
}

// ---------------------------------------------------------------------------
// Fixtures: the address pool and its stamps

interface CatalogueJson {
  threshold: string;
  platforms: { groups: { stamps: { name: string; weight: string; deprecated?: boolean }[] }[] }[];
}

/** Decimal text → integer in units of 1e-5 (catalogue weights have at most 3 fraction digits). */
function toFifthDigits(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  if (fraction.length > 5) throw new Error(`unexpected precision in ${text}`);
  return BigInt(whole ?? '0') * 100_000n + BigInt(fraction.padEnd(5, '0'));
}

function formatFifthDigits(value: bigint): string {
  return `${value / 100_000n}.${(value % 100_000n).toString().padStart(5, '0')}`;
}

function choosePoolProviders() {
  const catalogue = JSON.parse(readFileSync(join(repoDir, 'assets', 'stamp-catalogue.json'), 'utf8')) as CatalogueJson;
  const stamps = catalogue.platforms
    .flatMap((p) => p.groups.flatMap((g) => g.stamps))
    .filter((s) => !s.deprecated && toFifthDigits(s.weight) > 0n)
    .slice(0, STAMPS_PER_ADDRESS);
  if (stamps.length < STAMPS_PER_ADDRESS) throw new Error(`the catalogue has only ${stamps.length} usable providers`);
  const raw = stamps.reduce((sum, s) => sum + toFifthDigits(s.weight), 0n);
  return {
    providers: stamps.map((s) => s.name),
    expectedRawScore: formatFifthDigits(raw),
    expectedScore: raw >= toFifthDigits(catalogue.threshold) ? '1.00000' : '0.00000',
  };
}

async function writeCredentials(dataDir: string, file: string, providers: string[]): Promise<{ addresses: string[]; ms: number }> {
  const start = performance.now();
  const privateKey = await loadOrCreateIssuerKey(dataDir);
  const expiresAt = new Date(Date.now() + 90 * DAY_MS);
  const addresses = Array.from({ length: settings.addresses }, () => `0x${randomBytes(20).toString('hex')}`);
  const documents = addresses.map((address) => ({
    address,
    credentials: providers.map((provider) => issueCredential({ privateKey, address, provider, expiresAt })),
  }));
  writeFileSync(file, JSON.stringify(documents));
  return { addresses, ms: Math.round(performance.now() - start) };
}

// ---------------------------------------------------------------------------
// PostgreSQL throw-away database

async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> } | { unreachable: string }> {
  const admin = new pg.Client({ connectionString: settings.postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => {});
    return { unreachable: (error as Error).message || String(error) };
  }
  const name = `stampgate_bench_${Date.now()}_${process.pid}`;
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(settings.postgresUrl);
  url.pathname = `/${name}`;
  return {
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

// ---------------------------------------------------------------------------
// Cases

type CaseName = 'ceiling' | 'score' | 'submit' | 'bounties' | 'bounties-uncached';

interface CaseRecord {
  case: CaseName;
  title: string;
  database: DatabaseKind | '-';
  result: LoadResult;
  serverUsage: ServerUsage | null;
  after: TargetCheck | null;
}

const titles: Record<CaseName, string> = {
  ceiling: 'ceiling (bare Fastify)',
  score: 'GET score (DONE)',
  submit: 'POST submit (20 stamps)',
  bounties: 'GET bounties (10k, 2 filters + order)',
  'bounties-uncached': 'GET bounties, cache off (every request queries)',
};

function usageHooks(target: RunningTarget, window: string, sink: { usage: ServerUsage | null }): LoadCase['around'] {
  if (settings.server !== 'child') return undefined;
  return {
    before: () => target.usageStart(window),
    after: async () => {
      sink.usage = await target.usageStop();
    },
  };
}

function common(port: number) {
  return {
    url: `http://127.0.0.1:${port}`,
    connections: settings.connections,
    warmupSeconds: settings.warmupSeconds,
    seconds: settings.seconds,
  };
}

async function runCeiling(): Promise<CaseRecord> {
  const target = await launch({ kind: 'ceiling' }, 'ceiling');
  try {
    const sink = { usage: null as ServerUsage | null };
    const result = await runLoad({
      ...common(target.info.port),
      method: 'GET',
      headers: {},
      path: () => '/',
      around: usageHooks(target, 'ceiling', sink),
    });
    return { case: 'ceiling', title: titles.ceiling, database: '-', result, serverUsage: sink.usage, after: null };
  } finally {
    await target.stop();
  }
}

interface ScoreBody {
  status?: unknown;
  score?: unknown;
}

function scoreProblem(record: ScoreBody | undefined, expectedScore: string): string | null {
  if (!record) return 'no score record';
  if (record.status !== 'DONE') return `status ${String(record.status)}`;
  if (record.score !== expectedScore) return `score ${String(record.score)}`;
  return null;
}

/** Waits for jobs left running by submissions that answered PROCESSING, then reports the final state. */
async function settle(target: RunningTarget): Promise<TargetCheck> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const check = await target.check();
    if ((check.queueDepth === 0 && !check.scoreStatus.PROCESSING) || Date.now() > deadline) return check;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function runStampgate(database: DatabaseKind, spec: Extract<TargetSpec, { kind: 'stampgate' }>, wanted: CaseName[]): Promise<{ records: CaseRecord[]; info: TargetInfo }> {
  const target = await launch(spec, `stampgate-${database}`);
  const records: CaseRecord[] = [];
  try {
    const { port, apiKey, scorerId, addresses } = target.info;
    if (!apiKey || scorerId === undefined || !addresses) throw new Error('stampgate target did not report its key, scorer and addresses');
    const headers = { 'x-api-key': apiKey };
    const pick = (n: number) => addresses[n % addresses.length] as string;

    if (wanted.includes('score')) {
      const sink = { usage: null as ServerUsage | null };
      const result = await runLoad({
        ...common(port),
        method: 'GET',
        headers,
        path: (n) => `/registry/score/${scorerId}/${pick(n)}`,
        checkBody: (body) => scoreProblem((JSON.parse(body) as { items?: ScoreBody[] }).items?.[0], spec.expectedScore),
        around: usageHooks(target, `score-${database}`, sink),
      });
      records.push({ case: 'score', title: titles.score, database, result, serverUsage: sink.usage, after: await settle(target) });
    }

    if (wanted.includes('submit')) {
      const sink = { usage: null as ServerUsage | null };
      const result = await runLoad({
        ...common(port),
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        path: () => '/registry/submit-passport',
        body: (n) => JSON.stringify({ address: pick(n), scorer_id: String(scorerId) }),
        checkBody: (body) => scoreProblem(JSON.parse(body) as ScoreBody, spec.expectedScore),
        around: usageHooks(target, `submit-${database}`, sink),
      });
      records.push({ case: 'submit', title: titles.submit, database, result, serverUsage: sink.usage, after: await settle(target) });
    }
    if (wanted.includes('bounties')) records.push(await runBounties(target, database, 'bounties'));
    return { records, info: target.info };
  } finally {
    await target.stop();
    if (wanted.includes('bounties-uncached')) {
      // A server of its own with the response cache off and no stamps to import.
      const noCredentials = join(dirname(spec.credentialsFile), 'no-credentials.json');
      writeFileSync(noCredentials, '[]');
      const uncached = await launch({ ...spec, credentialsFile: noCredentials, env: { ...spec.env, PUBLIC_CACHE_TTL: '0' } }, `stampgate-${database}-uncached`);
      try {
        records.push(await runBounties(uncached, database, 'bounties-uncached'));
      } finally {
        await uncached.stop();
      }
    }
  }
}

async function runBounties(target: RunningTarget, database: DatabaseKind, name: 'bounties' | 'bounties-uncached'): Promise<CaseRecord> {
  const sink = { usage: null as ServerUsage | null };
  const result = await runLoad({
    ...common(target.info.port),
    method: 'GET',
    headers: {},
    path: () => BOUNTIES_PATH,
    checkBody: (body) => {
      const list = JSON.parse(body) as { experience_level?: string; is_open?: boolean }[];
      if (!Array.isArray(list) || list.length === 0) return 'empty list';
      return list.every((b) => b.is_open === true && b.experience_level?.toLowerCase() === 'beginner') ? null : 'filter not applied';
    },
    around: usageHooks(target, `${name}-${database}`, sink),
  });
  return { case: name, title: titles[name], database, result, serverUsage: sink.usage, after: null };
}

// ---------------------------------------------------------------------------
// Report

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const line = (r: string[]) => r.map((cell, i) => (i === 0 || i === 1 || i === r.length - 1 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  const [head, ...body] = rows;
  return [line(head ?? []), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

function checksText(record: CaseRecord): string {
  const parts: string[] = [];
  const problems = Object.entries(record.result.bodyProblems);
  if (record.case !== 'ceiling') {
    const bad = problems.reduce((n, [, c]) => n + c, 0);
    const ok = record.case.startsWith('bounties') ? 'all filtered' : 'all DONE';
    parts.push(bad === 0 ? ok : `bad bodies ${bad} (${problems.map(([k, c]) => `${k}: ${c}`).join(', ')})`);
  }
  if (record.after) {
    if (record.after.queueDepth > 0) parts.push(`queue left ${record.after.queueDepth}`);
    const notDone = Object.entries(record.after.scoreStatus).filter(([status]) => status !== 'DONE');
    if (notDone.length > 0) parts.push(`rows ${notDone.map(([s, n]) => `${s}=${n}`).join(',')}`);
    if (record.after.workerFailures > 0) parts.push(`worker failures ${record.after.workerFailures}`);
  }
  return parts.join('; ');
}

function loadText(): string {
  return loadavg().map((n) => n.toFixed(2)).join(' ');
}

function cpuText(usage: ServerUsage | null, requests: number): string {
  if (!usage) return 'n/a';
  const cpuMs = usage.cpuUserMs + usage.cpuSystemMs;
  return `${Math.round((cpuMs / usage.wallMs) * 100)}% / ${fixed((cpuMs * 1000) / Math.max(1, requests), 0)}µs`;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const problems: string[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'stampgate-bench-'));
  const dataDir = join(tmp, 'data');
  let dropPostgres: (() => Promise<void>) | null = null;
  const records: CaseRecord[] = [];
  const setupInfo: Record<string, unknown> = {};
  let postgresNote: string | null = null;

  const interrupt = () => {
    console.error('\ninterrupted; cleaning up');
    void (dropPostgres ? dropPostgres() : Promise.resolve())
      .catch(() => {})
      .finally(() => {
        rmSync(tmp, { recursive: true, force: true });
        process.exit(130);
      });
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);

  console.log(
    `Stampgate benchmark: ${settings.seconds}s per case after ${settings.warmupSeconds}s warm-up, ${settings.connections} connections, ` +
      `server ${settings.server === 'child' ? 'in a child process' : 'in this process'}, ${cpus().length} CPUs, Node ${process.version}, ` +
      `load average ${loadText()}`,
  );
  const loadAtStart = loadavg();
  if ((loadAtStart[0] ?? 0) > cpus().length * 0.75) {
    console.log(`WARNING: the machine is busy (1-minute load ${loadText().split(' ')[0]} on ${cpus().length} CPUs); req/s and latency will be low and noisy.`);
  }
  const forced = new Set(Object.keys(serverEnv('', '')));
  const passedThrough = describeSettings()
    .map((setting) => setting.name)
    .filter((name) => !forced.has(name) && process.env[name] !== undefined && process.env[name] !== '');
  if (passedThrough.length > 0) console.log(`Stampgate settings from the environment: ${passedThrough.join(', ')}`);

  try {
    const stampCases = settings.cases.filter((c): c is Exclude<CaseName, 'ceiling'> => c !== 'ceiling');
    if (settings.cases.includes('ceiling')) {
      console.log('ceiling: measuring');
      records.push(await runCeiling());
    }

    if (stampCases.length > 0) {
      const pool = choosePoolProviders();
      const credentialsFile = join(tmp, 'credentials.json');
      const issued = await writeCredentials(dataDir, credentialsFile, pool.providers);
      console.log(`issued ${settings.addresses} addresses × ${STAMPS_PER_ADDRESS} stamps with the development issuer in ${issued.ms} ms`);
      setupInfo.providers = pool.providers;
      setupInfo.expectedScore = pool.expectedScore;
      setupInfo.expectedRawScore = pool.expectedRawScore;
      setupInfo.issueMs = issued.ms;

      for (const database of settings.databases) {
        let databaseUrl: string;
        if (database === 'sqlite') {
          databaseUrl = `sqlite:${join(tmp, 'sqlite', 'stampgate.sqlite')}`;
        } else {
          const created = await createPostgresDatabase();
          if ('unreachable' in created) {
            postgresNote = `PostgreSQL at ${settings.postgresUrl} is unreachable (${created.unreachable}); SQLite only.`;
            console.log(postgresNote);
            continue;
          }
          dropPostgres = created.drop;
          databaseUrl = created.url;
        }
        console.log(`${database}: importing the stamps, scoring every address once, then measuring`);
        const spec: Extract<TargetSpec, { kind: 'stampgate' }> = {
          kind: 'stampgate',
          database,
          env: serverEnv(dataDir, databaseUrl),
          credentialsFile,
          expectedScore: pool.expectedScore,
          expectedRawScore: pool.expectedRawScore,
          bounties: stampCases.includes('bounties') || stampCases.includes('bounties-uncached') ? settings.bounties : 0,
        };
        const run = await runStampgate(database, spec, stampCases);
        console.log(`${database}: set-up ${JSON.stringify(run.info.setup)}`);
        setupInfo[database] = { setup: run.info.setup, config: run.info.config };
        records.push(...run.records);
        if (database === 'postgres' && dropPostgres) {
          await dropPostgres();
          dropPostgres = null;
        }
      }
    }
  } catch (error) {
    problems.push(`run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    if (dropPostgres) await dropPostgres().catch((error: unknown) => problems.push(`dropping the PostgreSQL database failed: ${String(error)}`));
    rmSync(tmp, { recursive: true, force: true });
  }

  // Table
  const ceiling = records.find((r) => r.case === 'ceiling');
  const ceilingRps = ceiling?.result.rps ?? Number.NaN;
  const rows: string[][] = [
    ['case', 'database', 'req/s', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'vs ceiling', 'server CPU / per req', 'checks'],
    ...records.map((r) => [
      r.title,
      r.database,
      fixed(r.result.rps, 0),
      fixed(r.result.latencyMs.p50, 2),
      fixed(r.result.latencyMs.p99, 2),
      `${r.result.errors}/${r.result.non2xx}`,
      ceiling ? `${fixed((r.result.rps / ceilingRps) * 100, 1)}%` : 'n/a',
      cpuText(r.serverUsage, r.result.requests),
      checksText(r),
    ]),
  ];
  console.log('');
  console.log(table(rows));
  console.log('');

  // Targets (reported, not asserted)
  const sqliteScore = records.find((r) => r.case === 'score' && r.database === 'sqlite');
  const sqliteSubmit = records.find((r) => r.case === 'submit' && r.database === 'sqlite');
  const targetResults: { name: string; verdict: 'PASS' | 'FAIL' | 'SKIPPED'; measured: string }[] = [];
  if (sqliteScore && ceiling) {
    const ratio = sqliteScore.result.rps / ceilingRps;
    targetResults.push({
      name: `single-score read on SQLite ≥ ${targets.scoreReadVsCeiling * 100}% of the ceiling req/s`,
      verdict: ratio >= targets.scoreReadVsCeiling ? 'PASS' : 'FAIL',
      measured: `${fixed(ratio * 100, 1)}% (${fixed(sqliteScore.result.rps, 0)} of ${fixed(ceilingRps, 0)} req/s)`,
    });
  } else {
    targetResults.push({ name: 'single-score read on SQLite vs ceiling', verdict: 'SKIPPED', measured: 'case not run' });
  }
  if (sqliteSubmit) {
    targetResults.push({
      name: `20-stamp submission on SQLite p50 ≤ ${targets.submitP50Ms} ms`,
      verdict: sqliteSubmit.result.latencyMs.p50 <= targets.submitP50Ms ? 'PASS' : 'FAIL',
      measured: `p50 ${fixed(sqliteSubmit.result.latencyMs.p50, 2)} ms`,
    });
  } else {
    targetResults.push({ name: '20-stamp submission on SQLite p50', verdict: 'SKIPPED', measured: 'case not run' });
  }
  const sqliteBounties = records.find((r) => r.case === 'bounties' && r.database === 'sqlite');
  if (sqliteBounties && ceiling) {
    const ratio = sqliteBounties.result.rps / ceilingRps;
    targetResults.push({
      name: `bounties list on SQLite ≥ ${targets.bountiesVsCeiling * 100}% of the ceiling req/s`,
      verdict: ratio >= targets.bountiesVsCeiling ? 'PASS' : 'FAIL',
      measured: `${fixed(ratio * 100, 1)}% (${fixed(sqliteBounties.result.rps, 0)} of ${fixed(ceilingRps, 0)} req/s)`,
    });
  } else {
    targetResults.push({ name: 'bounties list on SQLite vs ceiling', verdict: 'SKIPPED', measured: 'case not run' });
  }
  for (const t of targetResults) console.log(`${t.verdict.padEnd(7)} ${t.name}: ${t.measured}`);
  console.log(`(load average at the end: ${loadText()}; figures from a busy machine are not comparable)`);

  // What counts as broken (exit 1): a failed run, a case without successes, errors, non-2xx, worker failures.
  for (const r of records) {
    const label = `${r.title} on ${r.database}`;
    if (r.result.requests === 0 || (r.result.statusCodes['200'] ?? 0) === 0) problems.push(`${label}: no successful response`);
    if (r.result.errors > 0) problems.push(`${label}: ${r.result.errors} connection errors (${r.result.timeouts} timeouts)`);
    if (r.result.non2xx > 0) problems.push(`${label}: ${r.result.non2xx} non-2xx responses ${JSON.stringify(r.result.statusCodes)}`);
    // A submission may answer PROCESSING on a slow machine; a read or a list must always be right.
    const badBodies = Object.values(r.result.bodyProblems).reduce((n, c) => n + c, 0);
    if (r.case !== 'submit' && badBodies > 0) problems.push(`${label}: ${badBodies} wrong bodies ${JSON.stringify(r.result.bodyProblems)}`);
    if (r.after && r.after.workerFailures > 0) problems.push(`${label}: scoring worker failed ${r.after.workerFailures} times, first: ${r.after.firstWorkerFailure}`);
  }

  // Results file
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    commit = null;
  }
  mkdirSync(resultsDir, { recursive: true });
  const resultsFile = join(resultsDir, 'latest.json');
  writeFileSync(
    resultsFile,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        commit,
        loadAverage: { start: loadAtStart, end: loadavg() },
        machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, memoryBytes: totalmem() },
        settings: { ...settings, postgresUrl: settings.postgresUrl.replace(/\/\/[^@/]*@/, '//…@'), stampgateEnvironment: passedThrough },
        postgres: postgresNote,
        setup: setupInfo,
        cases: records.map((r) => ({
          case: r.case,
          title: r.title,
          database: r.database,
          ratioToCeiling: ceiling ? r.result.rps / ceilingRps : null,
          ...r.result,
          serverUsage: r.serverUsage,
          after: r.after,
        })),
        targets: targetResults,
        problems,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nresults written to ${resultsFile}`);

  if (problems.length > 0) {
    console.error('\nSomething broke:');
    for (const p of problems) console.error(`  - ${p}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
