/**
 * The `batch-upload` bench case: how long creating a large asynchronous batch holds the server's
 * event loop. A `stampgate serve` child (no batch worker: only the upload is measured) receives a
 * 100,000-address batch as JSON, then as CSV, while this process asks `/health/live` every 10 ms
 * over a kept-alive connection. The largest gap between two answers, less the 10 ms the poller
 * waits itself, is the longest the server could not answer: the stall. Target: under 50 ms on
 * each database (reported, not asserted, like every bench target). The same measure over a
 * second with no upload is printed beside it: on a busy machine the poller and the server wait
 * for a core too, and that floor is not the upload's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createAppContext } from '../src/app/container.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { caseDatabase, serverEnv } from './fixtures.js';
import type { DatabaseKind } from './protocol.js';
import type { Verdict } from './verdicts.js';

const repoDir = fileURLToPath(new URL('..', import.meta.url));
const ADDRESSES = 100_000;
const POLL_EVERY_MS = 10;
export const STALL_TARGET_MS = 50;

export interface BatchUploadResult {
  database: DatabaseKind;
  body: 'json' | 'csv';
  addresses: number;
  status: number;
  uploadMs: number;
  polls: number;
  maxGapMs: number;
  maxStallMs: number;
  /** The same measure over a second with no upload: what the machine alone costs the poller. */
  quietStallMs: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function call(agent: Agent, port: number, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({ host: '127.0.0.1', port, path, agent, method: init.method ?? 'GET', headers: init.headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // A server that answers before the body ended (a refusal) may close the connection under it:
    // the answer, once received, is what counts.
    req.on('error', (error) => {
      if (answered) return;
      reject(error);
    });
    req.end(init.body);
  });
}

async function startServer(env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    cwd: repoDir,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const agent = new Agent({ keepAlive: false });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`batch-upload bench: the server exited (${child.exitCode})`);
    try {
      // Ready, not only live: a development server on a new database loads its demo data first.
      if ((await call(agent, port, '/health/ready')).status === 200) return child;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error('batch-upload bench: the server did not start within 60 s');
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Polls /health/live every POLL_EVERY_MS until `work` settles; the largest gap between two answers. */
async function measureWhile<T>(port: number, work: () => Promise<T>): Promise<{ result: T; polls: number; maxGapMs: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let done = false;
  let polls = 0;
  let maxGapMs = 0;
  // The first answer before the work starts, so that a stall at its very beginning is counted.
  await call(agent, port, '/health/live');
  let last = performance.now();
  const poller = (async () => {
    while (!done) {
      await sleep(POLL_EVERY_MS);
      await call(agent, port, '/health/live');
      const now = performance.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
      polls++;
    }
  })();
  let result: T;
  try {
    result = await work();
  } finally {
    // The answer to a poll sent during the work counts too, however late it comes.
    done = true;
    await poller;
    agent.destroy();
  }
  return { result, polls, maxGapMs };
}

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');

export async function runBatchUploadBench(database: DatabaseKind, postgresUrl: string): Promise<BatchUploadResult[] | { unreachable: string }> {
  const place = await caseDatabase(database, postgresUrl, 'batch-upload');
  if ('unreachable' in place) return place;
  const { dir, databaseUrl } = place;
  // Room for both uploads in the key's daily quota; no batch worker, so only the upload is measured.
  const env = { ...serverEnv(dir, databaseUrl), BATCH_DAILY_ADDRESSES: '1000000,1000000,1000000,1000000', BATCH_CONCURRENCY: '0' };
  let child: ChildProcess | null = null;
  try {
    const db = openDatabase(databaseUrl);
    await migrateToLatest(db);
    const ctx = await createAppContext(loadConfig(env), db);
    let key: string;
    let scorerId: number;
    try {
      const account = await ctx.accounts.createAccount('Batch upload bench');
      scorerId = (await ctx.accounts.createScorer(account.id, { name: 'bench', type: 'weighted' })).id;
      key = (await ctx.apiKeys.create(account.id, { tier: 4 })).key;
    } finally {
      await ctx.close();
    }
    const addresses = Array.from({ length: ADDRESSES }, (_, i) => addressNo(i + 1));
    const bodies = {
      json: { type: 'application/json', text: JSON.stringify({ addresses }) },
      csv: { type: 'text/csv', text: `address\n${addresses.join('\n')}\n` },
    };
    const port = await freePort();
    child = await startServer(env, port);
    const results: BatchUploadResult[] = [];
    const quiet = await measureWhile(port, () => sleep(1000));
    const quietStallMs = Math.max(0, quiet.maxGapMs - POLL_EVERY_MS);
    for (const body of ['json', 'csv'] as const) {
      const agent = new Agent({ keepAlive: false });
      const start = performance.now();
      const measured = await measureWhile(port, () =>
        call(agent, port, `/v2/scorers/${scorerId}/batches`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': bodies[body].type }, body: bodies[body].text }),
      );
      const uploadMs = performance.now() - start;
      if (measured.result.status !== 202) throw new Error(`batch-upload bench: ${body} upload answered ${measured.result.status}: ${measured.result.body.slice(0, 200)}`);
      const maxStallMs = Math.max(0, measured.maxGapMs - POLL_EVERY_MS);
      results.push({ database, body, addresses: ADDRESSES, status: measured.result.status, uploadMs, polls: measured.polls, maxGapMs: measured.maxGapMs, maxStallMs, quietStallMs });
    }
    return results;
  } finally {
    if (child) await stopServer(child);
    await place.release();
  }
}

const databaseLabel: Record<DatabaseKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** The case on each database: a line per upload and one verdict per upload against STALL_TARGET_MS. */
export async function runBatchUploadCases(databases: DatabaseKind[], postgresUrl: string): Promise<{ results: BatchUploadResult[]; verdicts: Verdict[] }> {
  const all: BatchUploadResult[] = [];
  const verdicts: Verdict[] = [];
  for (const database of databases) {
    const run = await runBatchUploadBench(database, postgresUrl);
    if ('unreachable' in run) {
      console.log(`batch-upload-${database}: PostgreSQL unreachable (${run.unreachable})`);
      continue;
    }
    for (const r of run) {
      const verdict = r.maxStallMs < STALL_TARGET_MS ? 'PASS' : 'FAIL';
      console.log(
        `batch upload: event-loop stall, ${databaseLabel[database]}, ${r.addresses} addresses as ${r.body.toUpperCase()}: max stall ${r.maxStallMs.toFixed(1)} ms ` +
          `(largest gap ${r.maxGapMs.toFixed(1)} ms between ${r.polls} /health/live answers every ${POLL_EVERY_MS} ms; upload ${Math.round(r.uploadMs)} ms; ` +
          `with no upload ${r.quietStallMs.toFixed(1)} ms) ${verdict} (< ${STALL_TARGET_MS} ms)`,
      );
      verdicts.push({
        name: `batch upload: event-loop stall, ${databaseLabel[database]}, ${r.body.toUpperCase()} (< ${STALL_TARGET_MS} ms)`,
        verdict,
        measured: `${r.maxStallMs.toFixed(1)} ms`,
        // On a busy machine the poller waits for a core too: the quiet second's stall says how much.
        caveat: r.quietStallMs > STALL_TARGET_MS / 2 ? `busy machine: ${r.quietStallMs.toFixed(1)} ms stall with no upload` : null,
      });
    }
    all.push(...run);
  }
  return { results: all, verdicts };
}
