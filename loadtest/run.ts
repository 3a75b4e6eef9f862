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
 *
 * Parts: definitions.ts (mix, settings shape), processes.ts (child processes), cpu.ts (CPU
 * accounting), load.ts (load generator, statistics), configuration.ts (one configuration's run),
 * batch-window.ts (the window under a batch), report.ts (tables, targets); this file reads the
 * settings, seeds the stamps, runs each configuration and writes latest.json.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { issueCredential, loadOrCreateIssuerKey } from '../src/scoring/stamps/dev-issuer.js';
import { buildCli } from '../test/helpers/processes.js';
import { type ConfigResult, dropCurrentDatabase, runConfig } from './configuration.js';
import { type ConfigName, type LoadtestSettings, repoDir, resultsDir, weights } from './definitions.js';
import { killAllRunning, useCli } from './processes.js';
import { loadText, printReport } from './report.js';

const DAY = 86_400_000;

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}=${raw} must be a whole number ≥ ${min}`);
  return value;
}

const settings: LoadtestSettings = {
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

async function main(): Promise<number> {
  const startedAt = new Date();
  const loadAtStart = loadavg();
  const tmp = mkdtempSync(join(tmpdir(), 'stampgate-loadtest-'));
  const results: ConfigResult[] = [];
  const problems: string[] = [];
  const onSignal = () => {
    killAllRunning();
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
    useCli(await buildCli(join(tmp, 'build')));

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
        const result = await runConfig(settings, name, tmp, dataDir, stampsFile, addresses);
        results.push(result);
        console.log(`done (set-up ${JSON.stringify(result.setupMs)})`);
      } catch (error) {
        console.log('failed');
        problems.push(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    }
  } finally {
    killAllRunning();
    rmSync(tmp, { recursive: true, force: true });
  }

  const targets = printReport(results, loadAtStart);

  for (const r of results) {
    if (r.all.errors > 0 || r.socketErrors > 0 || r.timeouts > 0) problems.push(`${r.name}: failed requests; first: ${r.firstErrors.join(' | ')}`);
    if (r.serverErrorLines.length > 0) problems.push(`${r.name}: servers logged ${r.serverErrorLines.length} error(s); first: ${r.serverErrorLines[0]}`);
    if (r.scoresAfter.DONE !== settings.addresses) {
      const jobs = r.jobsLeft ? `; jobs left in the queue ${JSON.stringify(r.jobsLeft)}` : '';
      const warnings = `; the servers' warnings: ${r.serverWarningLines.length}${r.serverWarningLines.length > 0 ? `, the first ${r.serverWarningLines.slice(0, 3).join(' | ')}` : ''}`;
      problems.push(`${r.name}: scores after the run ${JSON.stringify(r.scoresAfter)}${jobs}${warnings}`);
    }
    for (const exit of r.exits) if (exit.code !== 0) problems.push(`${r.name}: ${exit.label} exited ${JSON.stringify(exit)} after SIGTERM`);
  }

  let commit: string | null;
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
    killAllRunning();
    process.exit(1);
  },
);
