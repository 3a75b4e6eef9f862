/**
 * `npm run bench`: throughput and latency of Stampgate's hot paths against a
 * bare Fastify ceiling, on SQLite and PostgreSQL, with autocannon over loopback.
 *
 * Cases
 *   ceiling  bare Fastify 5, one route returning a small JSON object
 *   ceiling-large  the same returning the 100 KB page, gzipped, pre-encoded (bench/ceiling-large.ts; when asked for)
 *   score    GET /registry/score/{scorer_id}/{address} of DONE scores (rotating over the pool)
 *   submit   POST /registry/submit-passport of addresses holding 20 verified stamps,
 *            in-process scoring worker running, rotating over the pool
 *   bounties GET /api/v0.1/bounties/, 10,000 bounties, two filters and an order_by, cached as served;
 *            bounties-uncached the same with PUBLIC_CACHE_TTL=0 (every request a cache miss)
 *   v2-score, attestation  GET /v2/stamps/{scorer_id}/score/{address} and its offchain attestation
 *   batch    batches of the pool, addresses/s with 1 and 2 workers (bench/batch.ts; in latest.json's setup)
 *   webhooks, webhook-fairness, batch-upload  cases with servers of their own (bench/own-server-cases.ts)
 * Options and environment (BENCH_*): `npm run bench -- --help` (bench/options.ts), e.g.
 * `npm run bench -- --case score --database sqlite --profile`. Any other Stampgate setting
 * (SUBMIT_WAIT_MS, SCORING_CONCURRENCY, …) is passed through to the server.
 *
 * Every case reports the server's CPU per request, its req/s and CPU as ratios to the ceiling's, the
 * load average and the CPU other processes used meanwhile (a regression raises the CPU per request,
 * a busy machine only lowers req/s); then PASS/FAIL per target (bench/verdicts.ts), bench/results/latest.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeSettings } from '../src/config/index.js';
import { bountiesLoad } from './bounties-seed.js';
import { ceilingLargeLoad } from './ceiling-large.js';
import { choosePoolProviders, createPostgresDatabase, serverEnv, STAMPS_PER_ADDRESS, writeCredentials } from './fixtures.js';
import { launchChild, profiles } from './launch.js';
import { type LoadCase, runLoad } from './load.js';
import { type MachineUsage, machineMeter } from './machine.js';
import { type BenchSettings, type CaseName, parseSettings, UsageError, usageText } from './options.js';
import { medianRound, type PairedMeasure } from './paired-rounds.js';
import { benchProfileText } from './profile-summary.js';
import type { DatabaseKind, ServerUsage, TargetCheck, TargetInfo, TargetSpec } from './protocol.js';
import { v2ScoreLoad } from './v2-score-case.js';
import { attestationLoad } from './attestation-case.js';
import { brokenCases, type CaseRecord, resultsTable, titles } from './report.js';
import { writeResultsFile } from './results-file.js';
import type { RunningTarget } from './target.js';
import { judge, type Verdict, verdictLines } from './verdicts.js';
import { judgeAgainstBaseline, readBaselineOrExit } from './baseline.js';
import { isOwnServerCase, type OwnServerCase, runOwnServerCases } from './own-server-cases.js';

const benchDir = fileURLToPath(new URL('./', import.meta.url));
const repoDir = fileURLToPath(new URL('..', import.meta.url));
const resultsDir = join(benchDir, 'results');

function readSettings(): BenchSettings {
  try {
    const parsed = parseSettings(process.argv.slice(2), process.env);
    if (parsed) return parsed;
    console.log(usageText);
    process.exit(0);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${usageText}`);
    process.exit(2);
  }
}

const settings = readSettings();
// Read before the run, so that a wrong file is told at once rather than after it.
const baseline = readBaselineOrExit(settings.baselineFile);

// ---------------------------------------------------------------------------
// Servers under test: a child process (default) or this process

async function launch(spec: TargetSpec, label: string, profileWindow: string | null = null): Promise<RunningTarget> {
  if (settings.server === 'child') return launchChild(spec, label, profileWindow);
  const { startTarget } = await import('./target.js');
  return startTarget(spec);
}

// ---------------------------------------------------------------------------
// Cases

/** The measured window's name: the label of its CPU-profile window too. */
function windowName(name: CaseName, database: DatabaseKind | '-'): string {
  return database === '-' ? name : `${name}-${database}`;
}

/** `profileWindow` for launch(): set when the server about to start serves the profiled case. */
function profileWindowFor(name: CaseName, database: DatabaseKind | '-'): string | null {
  return settings.profileCase === name ? windowName(name, database) : null;
}

/** One case: warm-up, then the measured run with the server's and the machine's CPU sampled around it. */
async function measure(
  target: RunningTarget,
  name: CaseName,
  database: DatabaseKind | '-',
  load: Omit<LoadCase, 'url' | 'connections' | 'warmupSeconds' | 'seconds' | 'around'>,
): Promise<CaseRecord> {
  console.log(`${windowName(name, database)}: measuring (load average ${loadText()})`);
  const window = windowName(name, database);
  let serverUsage: ServerUsage | null = null;
  let machine: MachineUsage | null = null;
  let meter: ReturnType<typeof machineMeter> | null = null;
  const result = await runLoad({
    ...load,
    url: `http://127.0.0.1:${target.info.port}`,
    connections: settings.connections,
    warmupSeconds: settings.warmupSeconds,
    seconds: settings.seconds,
    ...(settings.rate ? { rate: settings.rate } : {}),
    around: {
      before: async () => {
        if (settings.server === 'child') await target.usageStart(window);
        meter = machineMeter();
      },
      after: async () => {
        machine = meter?.stop() ?? null;
        if (settings.server === 'child') serverUsage = await target.usageStop();
      },
    },
  });
  const profiled = settings.profileCase === name;
  return { case: name, title: titles[name], database, result, serverUsage, machine, after: null, profiled, pairedCeiling: null, rounds: [] };
}

/** The ceiling's server, up until the end of the run: measured again right after each round of a paired case. */
let ceilingServer: RunningTarget | null = null;
const ceilingLoad = { method: 'GET', headers: {}, path: () => '/' } as const;

async function runCeiling(name: 'ceiling' | 'ceiling-large'): Promise<CaseRecord> {
  const target = await launch({ kind: name }, name, profileWindowFor(name, '-'));
  if (name === 'ceiling') {
    ceilingServer = target;
    return measure(target, name, '-', ceilingLoad);
  }
  try {
    return await measure(target, name, '-', ceilingLargeLoad());
  } finally {
    await target.stop();
  }
}

/** A case judged as a ratio to the ceiling: `settings.rounds` rounds, each followed by a ceiling window; the median round (bench/paired-rounds.ts). */
async function measurePaired(target: RunningTarget, name: CaseName, database: DatabaseKind, load: Parameters<typeof measure>[3], by: PairedMeasure): Promise<CaseRecord> {
  const rounds: CaseRecord[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const record = await measure(target, name, database, load);
    rounds.push({ ...record, pairedCeiling: ceilingServer ? await measure(ceilingServer, 'ceiling', '-', ceilingLoad) : null });
  }
  return medianRound(rounds, by);
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

async function runStampgate(database: DatabaseKind, spec: Extract<TargetSpec, { kind: 'stampgate' }>, wanted: CaseName[]): Promise<{ records: CaseRecord[]; info: TargetInfo | null }> {
  const records: CaseRecord[] = [];
  let info: TargetInfo | null = null;
  const sharedCases = wanted.filter((c) => c === 'score' || c === 'submit' || c === 'bounties' || c === 'v2-score' || c === 'attestation');
  if (sharedCases.length > 0) {
    const profiled = sharedCases.find((c) => c === settings.profileCase);
    const target = await launch(spec, `stampgate-${database}`, profiled ? windowName(profiled, database) : null);
    try {
      info = target.info;
      const { apiKey, scorerId, addresses } = target.info;
      if (!apiKey || scorerId === undefined || !addresses) throw new Error('stampgate target did not report its key, scorer and addresses');
      const headers = { 'x-api-key': apiKey };
      const pick = (n: number) => addresses[n % addresses.length] as string;

      if (wanted.includes('score')) {
        const record = await measurePaired(target, 'score', database, {
          method: 'GET',
          headers,
          path: (n) => `/registry/score/${scorerId}/${pick(n)}`,
          checkBody: (body) => scoreProblem((JSON.parse(body) as { items?: ScoreBody[] }).items?.[0], spec.expectedScore),
        }, 'ratioToCeiling');
        records.push({ ...record, after: await settle(target) });
      }
      if (wanted.includes('submit')) {
        const record = await measure(target, 'submit', database, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          path: () => '/registry/submit-passport',
          body: (n) => JSON.stringify({ address: pick(n), scorer_id: String(scorerId) }),
          checkBody: (body) => scoreProblem(JSON.parse(body) as ScoreBody, spec.expectedScore),
          checkDuringLoad: true,
        });
        records.push({ ...record, after: await settle(target) });
      }
      if (wanted.includes('bounties')) records.push(await runBounties(target, database, 'bounties'));
      if (wanted.includes('v2-score')) {
        const record = await measure(target, 'v2-score', database, v2ScoreLoad(apiKey, scorerId, pick, spec.expectedRawScore));
        records.push({ ...record, after: await settle(target) });
      }
      if (wanted.includes('attestation')) {
        const record = await measure(target, 'attestation', database, attestationLoad(apiKey, scorerId, pick));
        records.push({ ...record, after: await settle(target) });
      }
    } finally {
      await target.stop();
    }
  }
  if (wanted.includes('bounties-uncached')) {
    // A server of its own with the response cache off and no stamps to import.
    const noCredentials = join(dirname(spec.credentialsFile), 'no-credentials.json');
    writeFileSync(noCredentials, '[]');
    const uncachedSpec = { ...spec, credentialsFile: noCredentials, env: { ...spec.env, PUBLIC_CACHE_TTL: '0' } };
    const uncached = await launch(uncachedSpec, `stampgate-${database}-uncached`, profileWindowFor('bounties-uncached', database));
    try {
      info ??= uncached.info;
      records.push(await runBounties(uncached, database, 'bounties-uncached'));
    } finally {
      await uncached.stop();
    }
  }
  return { records, info };
}

async function runBounties(target: RunningTarget, database: DatabaseKind, name: 'bounties' | 'bounties-uncached'): Promise<CaseRecord> {
  // The cached list is judged by its CPU per request over the ceiling's; the uncached one by its own req/s.
  return name === 'bounties' ? measurePaired(target, name, database, bountiesLoad(), 'cpuVsCeiling') : measure(target, name, database, bountiesLoad());
}

// Report

function loadText(): string {
  return loadavg().map((n) => n.toFixed(2)).join(' ');
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const problems: string[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'stampgate-bench-'));
  const dataDir = join(tmp, 'data');
  let dropPostgres: (() => Promise<void>) | null = null;
  const records: CaseRecord[] = [];
  const setupInfo: Record<string, unknown> = {};
  const ownVerdicts: Verdict[] = [];
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
    `Stampgate benchmark: ${settings.seconds}s per case after ${settings.warmupSeconds}s warm-up, ${settings.connections} connections${settings.rate ? ` offering ${settings.rate} req/s` : ''}, ` +
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
    const stampCases = settings.cases.filter(
      (c): c is Exclude<CaseName, 'ceiling' | 'ceiling-large' | OwnServerCase> => !c.startsWith('ceiling') && !isOwnServerCase(c),
    );
    for (const name of ['ceiling', 'ceiling-large'] as const) if (settings.cases.includes(name)) records.push(await runCeiling(name));

    if (stampCases.length > 0) {
      const pool = choosePoolProviders();
      const credentialsFile = join(tmp, 'credentials.json');
      const issued = await writeCredentials(dataDir, credentialsFile, pool.providers, settings.addresses);
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
          const created = await createPostgresDatabase(settings.postgresUrl);
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
        if (run.info) {
          console.log(`${database}: set-up ${JSON.stringify(run.info.setup)}`);
          setupInfo[database] = { setup: run.info.setup, config: run.info.config };
        }
        records.push(...run.records);
        if (stampCases.includes('batch')) setupInfo[`batch-${database}`] = await (await import('./batch.js')).runBatchBench(database, dataDir, databaseUrl, credentialsFile);
        if (database === 'postgres' && dropPostgres) {
          await dropPostgres();
          dropPostgres = null;
        }
      }
    }
    const own = await runOwnServerCases(settings.cases, settings.databases, settings.postgresUrl, loadText);
    records.push(...own.records);
    Object.assign(setupInfo, own.setupInfo);
    ownVerdicts.push(...own.verdicts);
  } catch (error) {
    problems.push(`run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await ceilingServer?.stop().catch((error: unknown) => problems.push(`stopping the ceiling failed: ${String(error)}`));
    if (dropPostgres) await dropPostgres().catch((error: unknown) => problems.push(`dropping the PostgreSQL database failed: ${String(error)}`));
    rmSync(tmp, { recursive: true, force: true });
  }

  console.log('');
  console.log(resultsTable(records));
  console.log('');

  // The performance targets (reported, not asserted)
  const ceiling = records.find((r) => r.case === 'ceiling');
  const targetResults = judge(records, settings.databases, settings.cases, settings.rate);
  targetResults.push(...ownVerdicts);
  if (baseline && settings.rate === null) targetResults.push(...judgeAgainstBaseline(records, baseline, settings.databases, settings.cases));
  if (ceiling) {
    console.log(
      `Performance targets. The run's first ceiling: ${Math.round(ceiling.result.rps)} req/s, p50 ${ceiling.result.latencyMs.p50.toFixed(2)} ms; ` +
        `the single score and the cached list: the median of ${settings.rounds} round(s), each against the ceiling measured right after it`,
    );
  }
  for (const line of verdictLines(targetResults)) console.log(line);
  console.log(`(load average at the end: ${loadText()}.) On a busy machine req/s and the ratios move by tens of per cent between runs;`);
  console.log('the server CPU per request moves by under 10 % between runs with similar "others", but grows with them (cache and');
  console.log('scheduler contention): to tell a regression from noise, compare the CPU per request of runs with similar "others".');
  for (const { dir, window } of profiles) console.log(`\n${benchProfileText(dir, window, settings.profileTop)}`);

  problems.push(...brokenCases(records));
  const resultsFile = writeResultsFile(resultsDir, repoDir, {
    startedAt,
    loadAtStart,
    settings,
    passedThrough,
    postgresNote,
    setup: setupInfo,
    records,
    targets: targetResults,
    problems,
  });
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
