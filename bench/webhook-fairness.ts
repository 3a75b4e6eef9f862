/**
 * The `webhook-fairness` bench case: how long a healthy endpoint of one account waits for its delivery while
 * another account's endpoints hang. Account A registers N endpoints on a loopback server that accepts every
 * request and never answers; a score event of A queues N deliveries, and once the first of them hangs at the
 * server, account B's score event queues one delivery to a receiver that answers 204 at once. Measured: from B's
 * event to its delivery arriving (signed, checked with the standardwebhooks verifier), with the default worker
 * settings (WEBHOOK_TIMEOUT_MS 10 s, WEBHOOK_DELIVERY_CONCURRENCY 8) and the worker polling in the background as
 * in production. Also reported: A's requests open at the hanging server when B's delivery arrived (they must
 * still be hanging) and the most that were open at once. PASS when the delay is under 5 s.
 *
 * Run alone: `npx tsx bench/webhook-fairness.ts [sqlite|postgres …]` (BENCH_POSTGRES_URL for PostgreSQL), or as
 * the case of `npm run bench -- --case webhook-fairness`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { createAppContext } from '../src/app/container.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { caseDatabase } from './fixtures.js';
import type { DatabaseKind } from './protocol.js';

/** The delay a healthy endpoint's delivery must stay under, whatever another account does. */
export const FAIRNESS_TARGET_MS = 5000;
const HANGING_COUNTS = [0, 16, 56] as const;
// Long enough for the old global order (every hanging attempt ahead of it timing out first) to finish.
const GIVE_UP_MS = 150_000;

export interface FairnessRun {
  database: DatabaseKind;
  hangingEndpoints: number;
  /** From the healthy account's score event to its delivery at the receiver; null when it never came. */
  delayMs: number | null;
  /** Requests of the hanging account open at its server when the healthy delivery arrived. */
  hangingOpenAtDelivery: number;
  /** The most requests of the hanging account open at once. */
  hangingOpenMost: number;
}

/** A loopback HTTP server that reads every request and never answers it. */
function hangingServer() {
  const open = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let most = 0;
  let firstSeen: () => void = () => {};
  const first = new Promise<void>((resolve) => (firstSeen = resolve));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    open.add(res);
    most = Math.max(most, open.size);
    res.on('close', () => open.delete(res));
    firstSeen();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    server,
    first,
    get open() {
      return open.size;
    },
    get most() {
      return most;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const listen = (server: ReturnType<typeof createServer>): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));

export async function runWebhookFairness(database: DatabaseKind, postgresUrl: string, hangingEndpoints: number): Promise<FairnessRun | { unreachable: string }> {
  const place = await caseDatabase(database, postgresUrl, 'fairness');
  if ('unreachable' in place) return place;
  const { dir, databaseUrl } = place;
  const hanging = hangingServer();
  let delivered: { at: number; body: string; headers: Record<string, string> } | null = null;
  let deliveredSeen: () => void = () => {};
  const arrived = new Promise<void>((resolve) => (deliveredSeen = resolve));
  let hangingOpenAtDelivery = 0;
  const healthy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      delivered ??= { at: performance.now(), body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> };
      hangingOpenAtDelivery = hanging.open;
      res.writeHead(204).end();
      deliveredSeen();
    });
  });
  const hangingPort = await listen(hanging.server);
  const healthyPort = await listen(healthy);
  const limit = String(Math.max(hangingEndpoints, 1));
  const config = loadConfig({
    ...process.env,
    STAMPGATE_ENV: 'development',
    DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // The hanging account may register all its endpoints on one scorer (the bench is about delivery, not the caps).
    WEBHOOK_MAX_PER_SCORER: limit,
    WEBHOOK_ENDPOINTS_PER_ACCOUNT: limit,
  });
  const db = openDatabase(databaseUrl);
  await migrateToLatest(db);
  const ctx = await createAppContext(config, db);
  try {
    const slow = await ctx.accounts.createAccount('Hanging');
    const slowScorer = await ctx.accounts.createScorer(slow.id, { name: 'Hanging', type: 'weighted' });
    for (let n = 0; n < hangingEndpoints; n++) {
      await ctx.webhooks.endpoints.register(slow.id, slowScorer.id, { url: `http://127.0.0.1:${hangingPort}/hang/${n}`, events: ['score.updated'] });
    }
    const fine = await ctx.accounts.createAccount('Healthy');
    const fineScorer = await ctx.accounts.createScorer(fine.id, { name: 'Healthy', type: 'weighted' });
    const { secret } = await ctx.webhooks.endpoints.register(fine.id, fineScorer.id, { url: `http://127.0.0.1:${healthyPort}/hook`, events: ['score.updated'] });

    ctx.webhooks.worker.start();
    if (hangingEndpoints > 0) {
      await ctx.v2.scores.scoreNow(slowScorer.id, slow.id, `0x${'a'.repeat(40)}`);
      await hanging.first;
    }
    const started = performance.now();
    await ctx.v2.scores.scoreNow(fineScorer.id, fine.id, `0x${'b'.repeat(40)}`);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([arrived, new Promise<void>((resolve) => (timer = setTimeout(resolve, GIVE_UP_MS)))]);
    clearTimeout(timer);
    const got = delivered as { at: number; body: string; headers: Record<string, string> } | null;
    if (got) new Webhook(secret).verify(got.body, got.headers);
    return {
      database,
      hangingEndpoints,
      delayMs: got ? Math.round(got.at - started) : null,
      hangingOpenAtDelivery,
      hangingOpenMost: hanging.most,
    };
  } finally {
    // The hanging attempts end now (connection reset), so the worker stops without waiting out their timeouts.
    await hanging.close();
    await ctx.close();
    healthy.closeAllConnections();
    await new Promise<void>((resolve) => healthy.close(() => resolve()));
    await place.release();
  }
}

export function fairnessLine(run: FairnessRun): string {
  const verdict = run.delayMs !== null && run.delayMs < FAIRNESS_TARGET_MS ? 'PASS' : 'FAIL';
  const delay = run.delayMs === null ? `not delivered within ${GIVE_UP_MS / 1000} s` : `${(run.delayMs / 1000).toFixed(2)} s`;
  return (
    `webhook-fairness-${run.database}: ${run.hangingEndpoints} hanging endpoints of another account: healthy delivery after ${delay} ` +
    `(${run.hangingOpenAtDelivery} hanging requests still open then, at most ${run.hangingOpenMost} at once) ` +
    `${verdict} (target < ${FAIRNESS_TARGET_MS / 1000} s)`
  );
}

/** The case on each database with 0, 16 and 56 hanging endpoints; prints one PASS/FAIL line per run. */
export async function runWebhookFairnessCases(databases: DatabaseKind[], postgresUrl: string): Promise<FairnessRun[]> {
  const runs: FairnessRun[] = [];
  for (const database of databases) {
    for (const count of HANGING_COUNTS) {
      const run = await runWebhookFairness(database, postgresUrl, count);
      if ('unreachable' in run) {
        console.log(`webhook-fairness-${database}: PostgreSQL unreachable (${run.unreachable})`);
        break;
      }
      console.log(fairnessLine(run));
      runs.push(run);
    }
  }
  return runs;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const asked = process.argv.slice(2).filter((name): name is DatabaseKind => name === 'sqlite' || name === 'postgres');
  const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const runs = await runWebhookFairnessCases(asked.length > 0 ? asked : ['sqlite', 'postgres'], postgresUrl);
  const failed = runs.some((run) => run.delayMs === null || run.delayMs >= FAIRNESS_TARGET_MS);
  process.exitCode = failed ? 1 : 0;
}
