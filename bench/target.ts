/**
 * The servers under test. Used in the server child process (bench/child.ts)
 * and, with BENCH_SERVER=inprocess, directly in the benchmark's own process.
 */
import { readFileSync } from 'node:fs';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { createAppContext, type AppContext } from '../src/app/container.js';
import { type Config, loadConfig } from '../src/config/index.js';
import { openConfiguredDatabase } from '../src/cli/context.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { buildServer } from '../src/app/server.js';
import { benchDeploymentFile } from './attestation-case.js';
import { seedBounties } from './bounties-seed.js';
import { ceilingLargeApp } from './ceiling-large.js';
import type { ProfileWindow, ServerUsage, TargetCheck, TargetInfo, TargetSpec } from './protocol.js';

export interface RunningTarget {
  info: TargetInfo;
  usageStart(window: string): Promise<void>;
  usageStop(): Promise<ServerUsage>;
  check(): Promise<TargetCheck>;
  stop(): Promise<void>;
}

export async function startTarget(spec: TargetSpec): Promise<RunningTarget> {
  return spec.kind === 'stampgate' ? startStampgate(spec) : startCeiling(spec.kind === 'ceiling-large' ? ceilingLargeApp() : null);
}

/** Measured windows of this process, on the clock of V8's CPU profiles (for bench/profile-summary.ts). */
export const profileWindows: ProfileWindow[] = [];

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

function usageMeter() {
  let cpu: NodeJS.CpuUsage | null = null;
  let elu: EventLoopUtilization | null = null;
  let wall = 0;
  let window: ProfileWindow | null = null;
  return {
    async usageStart(name: string): Promise<void> {
      window = { name, startUs: monotonicUs(), endUs: 0 };
      cpu = process.cpuUsage();
      elu = performance.eventLoopUtilization();
      wall = performance.now();
    },
    async usageStop(): Promise<ServerUsage> {
      if (!cpu || !elu) throw new Error('usageStop without usageStart');
      const used = process.cpuUsage(cpu);
      if (window) {
        window.endUs = monotonicUs();
        profileWindows.push(window);
        window = null;
      }
      const loop = performance.eventLoopUtilization(elu);
      return {
        cpuUserMs: used.user / 1000,
        cpuSystemMs: used.system / 1000,
        eventLoopUtilization: loop.utilization,
        wallMs: performance.now() - wall,
      };
    },
  };
}

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address');
  return address.port;
}

/** The ceiling: bare Fastify 5, one route, a small JSON object, logger off (or `app`, the 100 KB one). */
async function startCeiling(large: FastifyInstance | null): Promise<RunningTarget> {
  const app = large ?? Fastify({ logger: false });
  if (!large) app.get('/', async () => ({ hello: 'world' }));
  const port = await listen(app);
  return {
    info: { port, setup: {} },
    ...usageMeter(),
    check: async () => ({ scoreStatus: {}, queueDepth: 0, workerFailures: 0, firstWorkerFailure: null }),
    stop: async () => {
      await app.close();
    },
  };
}

interface ScoreRecordLike {
  status?: string;
  score?: string | null;
  evidence?: { rawScore?: string } | null;
}

interface AddressDocument {
  address: string;
  credentials: unknown[];
}

async function timed<T>(setup: Record<string, number>, name: string, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    setup[name] = Math.round(performance.now() - start);
  }
}

/** The configuration for the results file, without secrets. */
function redactConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    // Secrets and private keys (ATTESTATION_SIGNER_KEY, ONCHAIN_SENDER_KEY, WEBHOOK_SECRET_KEY, …).
    if (/secret|password/i.test(key) || /Key$/.test(key)) out[key] = value === null ? null : '(set)';
    else if (typeof value === 'string' && /^[a-z]+:\/\/[^@/]*@/i.test(value)) out[key] = value.replace(/\/\/[^@/]*@/, '//…@');
    else out[key] = value;
  }
  return out;
}

async function startStampgate(spec: Extract<TargetSpec, { kind: 'stampgate' }>): Promise<RunningTarget> {
  const setup: Record<string, number> = {};
  // The onchain routes sign for the chain of a deployment file: one made-up chain, unless the run names a file.
  const config = loadConfig({ ONCHAIN_CONFIG_FILE: benchDeploymentFile(), ...process.env, ...spec.env });
  if (config.env !== 'development') throw new Error('the benchmark needs STAMPGATE_ENV=development (dev issuer)');
  // Opened as `stampgate serve` opens it (pool size, timeouts).
  const database = openConfiguredDatabase(config);
  let ctx: AppContext | null = null;
  let app: FastifyInstance | null = null;
  // As `stampgate serve` does: close the server, then the context (worker, bus, Redis, database).
  const stop = async () => {
    if (app) await app.close();
    if (ctx) await ctx.close();
    else await database.close();
  };
  try {
    await timed(setup, 'migrateMs', () => migrateToLatest(database));
    ctx = await createAppContext(config, database, { http: true });
    const context = ctx;
    const failures: unknown[] = [];
    context.worker.on('failure', (error: unknown) => failures.push(error));

    const account = await context.accounts.createAccount('Benchmark');
    const scorer = await context.accounts.createScorer(account.id, { name: 'Benchmark binary scorer', type: 'binary' });
    const { key } = await context.apiKeys.create(account.id, { name: 'bench', tier: 4 });

    const documents = JSON.parse(readFileSync(spec.credentialsFile, 'utf8')) as AddressDocument[];
    const report = await timed(setup, 'importMs', () => context.stamps.importCredentials(documents));
    const expected = documents.reduce((n, d) => n + d.credentials.length, 0);
    if (report.stored !== expected) {
      const refused = report.results.filter((r) => r.status !== 'stored').slice(0, 3);
      throw new Error(`imported ${report.stored} of ${expected} stamps; e.g. ${JSON.stringify(refused)}`);
    }
    setup.stampsImported = report.stored;
    if (spec.bounties > 0) await timed(setup, 'seedBountiesMs', () => seedBounties(context, spec.bounties));

    context.worker.start();
    app = await buildServer(context, { logger: false });
    const port = await listen(app);

    // Every address is scored once before measuring, so that the score read has
    // DONE rows and the submission case re-scores (the common case).
    const server = app;
    await timed(setup, 'primeMs', async () => {
      const headers = { 'x-api-key': key };
      for (const { address } of documents) {
        const submitted = await server.inject({
          method: 'POST',
          url: '/registry/submit-passport',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: { address, scorer_id: String(scorer.id) },
        });
        if (submitted.statusCode !== 200) throw new Error(`priming ${address}: HTTP ${submitted.statusCode} ${submitted.body}`);
        // On a busy machine scoring can outlast the submission's wait: poll as a client would.
        let record = submitted.json() as ScoreRecordLike;
        for (let deadline = Date.now() + 60_000; record.status === 'PROCESSING' && Date.now() < deadline; ) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          const read = await server.inject({ method: 'GET', url: `/registry/score/${scorer.id}/${address}`, headers });
          record = (read.json() as { items?: ScoreRecordLike[] }).items?.[0] ?? record;
        }
        if (record.status !== 'DONE' || record.score !== spec.expectedScore || record.evidence?.rawScore !== spec.expectedRawScore) {
          throw new Error(`priming ${address}: expected DONE ${spec.expectedScore} (raw ${spec.expectedRawScore}), got ${JSON.stringify(record)}`);
        }
      }
    });
    // A live PostgreSQL has planner statistics (autovacuum analyses a table within a minute of a
    // bulk load); measure that steady state, not the first minute of a freshly filled database. After
    // the priming, so that the scores, holds and events it wrote are counted too.
    if (database.dialect === 'postgres') await timed(setup, 'analyzeMs', () => sql`analyze`.execute(database.db));

    return {
      info: {
        port,
        apiKey: key,
        scorerId: scorer.id,
        addresses: documents.map((d) => d.address),
        setup,
        config: redactConfig(config),
      },
      ...usageMeter(),
      check: async () => {
        const rows = await database.db
          .selectFrom('scores')
          .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
          .where('scorer_id', '=', scorer.id)
          .groupBy('status')
          .execute();
        const first = failures[0];
        return {
          scoreStatus: Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])),
          queueDepth: await context.jobs.queueDepth(),
          workerFailures: failures.length,
          firstWorkerFailure: first === undefined ? null : first instanceof Error ? `${first.name}: ${first.message}` : String(first),
        };
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}
