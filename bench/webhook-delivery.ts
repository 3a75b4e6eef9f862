/**
 * The `webhooks` bench case: webhook delivery throughput to a receiver on loopback. Score events are appended by
 * real v2 scorings (each writes its outbox row), then one webhook worker in this process dispatches the outbox and
 * sends every delivery (WEBHOOK_DELIVERY_CONCURRENCY at a time, one at a time per endpoint) to a local HTTP receiver
 * that answers 204 at once. Reported: deliveries per second from the first dispatch to the last settled attempt,
 * and the attempts' latency, as a row of the results table (req/s = deliveries/s, latency = attempt duration; no
 * server child, so no CPU figures). One run per database; no target (delivery is off the request path).
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { createAppContext } from '../src/app/container.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { caseDatabase } from './fixtures.js';
import type { DatabaseKind } from './protocol.js';
import { type CaseRecord, titles } from './report.js';

export interface WebhookBenchResult {
  database: DatabaseKind;
  endpoints: number;
  events: number;
  deliveries: number;
  seconds: number;
  deliveriesPerSecond: number;
  /** Attempt durations (ms), sorted. */
  durations: number[];
  concurrency: number;
}

const EVENTS = 300;
const ENDPOINTS = 4;

export async function runWebhookDeliveryBench(database: DatabaseKind, postgresUrl: string): Promise<WebhookBenchResult | { unreachable: string }> {
  const place = await caseDatabase(database, postgresUrl, 'webhooks');
  if ('unreachable' in place) return place;
  const { dir, databaseUrl } = place;
  let received = 0;
  let firstBody: { body: string; headers: Record<string, string> } | null = null;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received++;
      firstBody ??= { body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> };
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as { port: number }).port;
  const config = loadConfig({
    ...process.env,
    STAMPGATE_ENV: 'development',
    DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_MAX_PER_SCORER: String(ENDPOINTS),
  });
  const db = openDatabase(databaseUrl);
  await migrateToLatest(db);
  const ctx = await createAppContext(config, db);
  try {
    const account = await ctx.accounts.createAccount('Bench');
    const scorer = await ctx.accounts.createScorer(account.id, { name: 'Bench', type: 'weighted' });
    let secret = '';
    for (let n = 0; n < ENDPOINTS; n++) {
      const created = await ctx.webhooks.endpoints.register(account.id, scorer.id, { url: `http://127.0.0.1:${port}/hook/${n}`, events: ['score.updated'] });
      secret = n === 0 ? created.secret : secret;
    }
    for (let n = 1; n <= EVENTS; n++) await ctx.v2.scores.scoreNow(scorer.id, account.id, `0x${n.toString(16).padStart(40, '0')}`);
    const started = performance.now();
    await ctx.webhooks.worker.runOnce();
    const seconds = (performance.now() - started) / 1000;
    const expected = EVENTS * ENDPOINTS;
    if (received !== expected) throw new Error(`webhooks bench: the receiver got ${received} deliveries, expected ${expected}`);
    const sample = firstBody as { body: string; headers: Record<string, string> } | null;
    if (!sample) throw new Error('webhooks bench: nothing received');
    new Webhook(secret).verify(sample.body, sample.headers);
    const durations = (await ctx.database.db.selectFrom('webhook_attempts').select('duration_ms').execute()).map((row) => row.duration_ms).sort((a, b) => a - b);
    return {
      database,
      endpoints: ENDPOINTS,
      events: EVENTS,
      deliveries: expected,
      seconds,
      deliveriesPerSecond: expected / seconds,
      durations,
      concurrency: config.webhookDeliveryConcurrency,
    };
  } finally {
    await ctx.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await place.release();
  }
}

const at = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

function toRecord(run: WebhookBenchResult): CaseRecord {
  const { durations } = run;
  const p50 = at(durations, 50);
  const p99 = at(durations, 99);
  return {
    case: 'webhooks',
    title: titles.webhooks,
    database: run.database,
    result: {
      requests: run.deliveries,
      durationSeconds: run.seconds,
      rps: run.deliveriesPerSecond,
      latencyMs: { p50, p90: at(durations, 90), p99, max: durations.at(-1) ?? 0, mean: durations.reduce((a, b) => a + b, 0) / Math.max(1, durations.length) },
      autocannon: { rpsAverage: run.deliveriesPerSecond, p50, p99 },
      errors: 0,
      timeouts: 0,
      non2xx: 0,
      statusCodes: { '200': run.deliveries },
      bodyProblems: {},
      bodiesChecked: 0,
      warmup: { requests: 0, non2xx: 0, errors: 0 },
    },
    serverUsage: null,
    machine: null,
    after: null,
    profiled: false,
    pairedCeiling: null,
    rounds: [],
  };
}

/** The `webhooks` case on each database, as rows of the results table. */
export async function runWebhookCases(databases: DatabaseKind[], postgresUrl: string, loadText: () => string): Promise<CaseRecord[]> {
  const records: CaseRecord[] = [];
  for (const database of databases) {
    console.log(`webhooks-${database}: measuring (load average ${loadText()})`);
    const run = await runWebhookDeliveryBench(database, postgresUrl);
    if ('unreachable' in run) {
      console.log(`webhooks-${database}: PostgreSQL unreachable (${run.unreachable})`);
      continue;
    }
    console.log(
      `webhooks-${database}: ${run.deliveries} deliveries (${run.events} events × ${run.endpoints} endpoints, concurrency ${run.concurrency}) ` +
        `in ${run.seconds.toFixed(2)} s = ${Math.round(run.deliveriesPerSecond)} deliveries/s`,
    );
    records.push(toRecord(run));
  }
  return records;
}
