/**
 * The asynchronous batch at scale: the data set's batch group (fresh addresses with 20 stored
 * stamps each, bench/scale/batch-group.ts) queued as one batch of a new scorer, so every run
 * scores each address for the first time, and scored by `stampgate worker` processes (the built CLI; 1 on
 * SQLite, 2 on PostgreSQL) while the bench streams the results through the API
 * (`GET /v2/batches/{id}/results`). Reports addresses/s from creation to DONE, the time to the
 * first result line, and the highest resident memory (VmRSS) of the workers and of the API process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { operator } from '../../src/scoring/batches/batches.service.js';
import { serverEnv } from '../fixtures.js';
import { batchAddress } from './batch-group.js';
import type { ScaleDataset } from './build.js';
import { freshScorer, openScaleContext } from './context.js';
import { startScaleServer } from './server.js';

const repoDir = fileURLToPath(new URL('../..', import.meta.url));
const RSS_SAMPLE_MS = 250;

export interface BatchFigures {
  workers: number;
  addresses: number;
  seconds: number;
  addressesPerSecond: number;
  firstResultMs: number;
  workerRssMaxMb: number;
  apiRssMaxMb: number;
  /** The workers' CPU (user + system) per address scored: whether they, or something they wait for, set the pace. */
  workerCpuMsPerAddress: number;
}

/** CPU time (user + system) of a process so far, ms: fields 14 and 15 of /proc/<pid>/stat, in ticks of 10 ms. */
function cpuMsOf(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

export function rssMbOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0; // the process has ended
  }
}

/**
 * The built CLI, as operators run it (`stampgate worker`): compiled first, so that it is this
 * checkout's code; tsx's loader would add its own thread and about 60 MB to the RSS measured.
 */
function buildCli(): void {
  execFileSync(process.execPath, [join(repoDir, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: repoDir, stdio: 'inherit' });
}

function startWorker(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), 'bin/stampgate.js', 'worker'], {
    cwd: repoDir,
    env: { ...process.env, ...env, BATCH_CONCURRENCY: '1', BATCH_POLL_MS: '20', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Resolves once the worker says its batch worker started: the batch's clock leaves out the process's start-up. */
function workerStarted(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes('Batch worker')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`stampgate worker exited with ${code} before starting`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Reads the result stream to its end, resuming at the lines received when the server ends it
 * early (nothing finished for BATCH_RESULTS_WAIT_MS); resolves with the time of the first line.
 */
async function followResults(base: string, apiKey: string, batchId: string, expected: number, start: number): Promise<number> {
  let lines = 0;
  let first = Number.NaN;
  while (lines < expected) {
    const res = await fetch(`${base}/v2/batches/${batchId}/results?offset=${lines}`, { headers: { 'x-api-key': apiKey } });
    if (!res.ok || !res.body) throw new Error(`results: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      const text = decoder.decode(chunk as Uint8Array, { stream: true });
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1;
      if (lines > 0 && Number.isNaN(first)) first = performance.now() - start;
    }
  }
  return first;
}

/** One batch of the first `addresses` of the batch group with `workers` worker processes. */
export async function runBatchCase(dataset: ScaleDataset, addresses: number, workers: number, log: (line: string) => void): Promise<BatchFigures> {
  if (addresses > dataset.batchAddresses) throw new Error(`the set's batch group holds ${dataset.batchAddresses} addresses, ${addresses} asked`);
  buildCli();
  const ctx = await openScaleContext(dataset, { BATCH_MAX_ADDRESSES: String(Math.max(addresses, 100_000)) });
  const env = serverEnv(dataset.dataDir, dataset.databaseUrl);
  // The API serves the results only: its own batch worker stays off, the workers score.
  const api = await startScaleServer(dataset, { BATCH_CONCURRENCY: '0' });
  const children = Array.from({ length: workers }, () => startWorker(env));
  let workerRss = 0;
  let apiRss = 0;
  const sampler = setInterval(() => {
    for (const child of children) if (child.pid) workerRss = Math.max(workerRss, rssMbOf(child.pid));
    apiRss = Math.max(apiRss, api.rssMb());
  }, RSS_SAMPLE_MS);
  try {
    await Promise.all(children.map(workerStarted));
    const scorerId = await freshScorer(ctx, dataset, 'scale batch');
    const list = Array.from({ length: addresses }, (_, j) => batchAddress(j));
    log(`  batch: ${addresses} addresses x 20 stamps, ${workers} worker(s)`);
    const cpuBefore = children.reduce((sum, child) => sum + cpuMsOf(child.pid!), 0);
    const start = performance.now();
    const { batch } = await ctx.batches.service.createAsOperator(scorerId, { addresses: list });
    const firstResult = followResults(api.base, dataset.apiKey, batch.id, addresses, start);
    let seconds: number;
    let workerCpuMs = 0;
    for (;;) {
      const view = await ctx.batches.service.get(operator, batch.id);
      if (view.status === 'DONE') {
        seconds = (performance.now() - start) / 1000;
        workerCpuMs = children.reduce((sum, child) => sum + cpuMsOf(child.pid!), 0) - cpuBefore;
        if (view.failed > 0) throw new Error(`batch: ${view.failed} addresses failed`);
        break;
      }
      if (view.status !== 'PENDING' && view.status !== 'RUNNING') throw new Error(`batch ended ${view.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const firstResultMs = await firstResult;
    return {
      workers,
      addresses,
      seconds: Math.round(seconds * 10) / 10,
      addressesPerSecond: Math.round(addresses / seconds),
      firstResultMs: Math.round(firstResultMs),
      workerRssMaxMb: Math.round(workerRss),
      apiRssMaxMb: Math.round(apiRss),
      workerCpuMsPerAddress: Math.round((workerCpuMs / addresses) * 100) / 100,
    };
  } finally {
    clearInterval(sampler);
    await Promise.all(children.map(stopChild));
    await api.stop();
    await ctx.close();
  }
}

/** The batch targets: addresses/s per database (1 worker on SQLite, 2 on PostgreSQL), worker RSS. */
export function batchTargets(database: ScaleDataset['database']): { workers: number; addressesPerSecond: number; workerRssMb: number } {
  return database === 'sqlite' ? { workers: 1, addressesPerSecond: 2000, workerRssMb: 300 } : { workers: 2, addressesPerSecond: 1000, workerRssMb: 300 };
}

/** Runs the batch case on the scale set and prints its figures and PASS/FAIL lines; true when both pass. */
export async function batchCase(dataset: ScaleDataset, addresses: number, log: (line: string) => void): Promise<boolean> {
  const target = batchTargets(dataset.database);
  const f = await runBatchCase(dataset, addresses, target.workers, log);
  log(`    batch            ${f.addresses} addresses in ${f.seconds} s, ${f.addressesPerSecond} addresses/s, first result row after ${f.firstResultMs} ms, RSS max: worker ${f.workerRssMaxMb} MB, API ${f.apiRssMaxMb} MB, worker CPU ${f.workerCpuMsPerAddress} ms/address`);
  const speed = f.addressesPerSecond >= target.addressesPerSecond;
  const memory = f.workerRssMaxMb < target.workerRssMb;
  log(`  ${speed ? 'PASS' : 'FAIL'}  batch >= ${target.addressesPerSecond} addresses/s (${target.workers} worker(s)): ${f.addressesPerSecond}/s`);
  log(`  ${memory ? 'PASS' : 'FAIL'}  batch worker RSS < ${target.workerRssMb} MB: ${f.workerRssMaxMb} MB`);
  return speed && memory;
}
