/**
 * Batch throughput (`npm run bench -- --case batch`): addresses scored per second by asynchronous
 * batches whose addresses each hold 20 verified stamps, with one `stampgate worker` process and
 * with two. The stamps are imported (proofs verified) once; each round queues the pool as a batch
 * of a fresh scorer, so that every address is scored and written (a first scoring), and times it
 * from creation to DONE. Figures on a busy machine are noisy: compare the two worker counts of one
 * run rather than runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAppContext } from '../src/app/container.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { operator } from '../src/scoring/batches/batches.service.js';
import { serverEnv } from './fixtures.js';

const repoDir = fileURLToPath(new URL('..', import.meta.url));

export interface BatchBenchResult {
  database: string;
  workers: number;
  addresses: number;
  seconds: number;
  addressesPerSecond: number;
}

function startWorker(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker'], {
    cwd: repoDir,
    env: { ...process.env, ...env, BATCH_CONCURRENCY: '1', BATCH_POLL_MS: '20', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Imports the pool's stamps into `databaseUrl`, then for 1 and 2 worker processes runs `rounds`
 * batches of the whole pool, each for a new scorer.
 */
export async function runBatchBench(database: string, dataDir: string, databaseUrl: string, credentialsFile: string, rounds = 5): Promise<BatchBenchResult[]> {
  const env = serverEnv(dataDir, databaseUrl);
  const db = openDatabase(databaseUrl);
  await migrateToLatest(db);
  // Chunks of 25: the pool (200 addresses by default) is then shared by two workers.
  const ctx = await createAppContext(loadConfig({ ...env, BATCH_CONCURRENCY: '0', BATCH_CHUNK_SIZE: '25' }), db);
  const results: BatchBenchResult[] = [];
  try {
    const documents = JSON.parse(readFileSync(credentialsFile, 'utf8')) as { address: string; credentials: unknown[] }[];
    const report = await ctx.stamps.importCredentials(documents.flatMap((d) => d.credentials) as never);
    const refused = report.results.filter((r) => r.status === 'rejected').length;
    if (refused > 0) throw new Error(`batch bench: ${refused} stamps refused`);
    const addresses = documents.map((d) => d.address);
    const account = await ctx.accounts.createAccount('Batch bench');
    for (const workers of [1, 2]) {
      const children = Array.from({ length: workers }, () => startWorker(env));
      try {
        let scored = 0;
        let seconds = 0;
        for (let round = 0; round < rounds + 1; round++) {
          const scorer = await ctx.accounts.createScorer(account.id, { name: `bench ${workers}/${round}`, type: 'weighted' });
          const start = performance.now();
          const { batch } = await ctx.batches.service.createAsOperator(scorer.id, { addresses });
          for (;;) {
            const view = await ctx.batches.service.get(operator, batch.id);
            if (view.status === 'DONE') {
              if (view.failed > 0) throw new Error(`batch bench: ${view.failed} addresses failed`);
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          // The first round warms the workers up (start-up, caches) and is not counted.
          if (round === 0) continue;
          scored += addresses.length;
          seconds += (performance.now() - start) / 1000;
        }
        results.push({ database, workers, addresses: scored, seconds, addressesPerSecond: Math.round(scored / seconds) });
        console.log(`batch-${database}: ${workers} worker(s): ${scored} addresses × 20 stamps in ${seconds.toFixed(2)} s = ${Math.round(scored / seconds)} addresses/s`);
      } finally {
        await Promise.all(children.map(stopWorker));
      }
    }
  } finally {
    await ctx.close();
  }
  return results;
}

