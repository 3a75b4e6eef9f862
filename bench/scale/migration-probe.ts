/**
 * A migration step on the scale set's stamps table while the service keeps reading and writing
 * it (PostgreSQL): an index built with `createIndexOnline` and a chunked backfill with
 * `backfillInChunks` (src/db/online-steps.ts), as a migration marked `outsideTransaction` runs
 * them, while a probe on its own connection reads and then updates random stamps one at a time.
 * PASS when no probe statement waits more than a second. Undone afterwards: the index and the
 * backfilled column are dropped and the table vacuumed, so the cached set stays as built.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../src/db/connection.js';
import { backfillInChunks, createIndexOnline } from '../../src/db/online-steps.js';
import type { ScaleDataset } from './build.js';
import { FULL_SIZE, unitRandom } from './generator.js';

const INDEX = 'bench_probe_stamps_provider_idx';
const COLUMN = 'bench_probe';
const MAX_WAIT_MS = 1000;

export interface ProbeFigures {
  indexSeconds: number;
  backfillSeconds: number;
  rowsRewritten: number;
  probes: number;
  maxReadMs: number;
  maxWriteMs: number;
}

/** Reads and updates random generated stamps one at a time until `stop` is set; the longest wait of each. */
async function probe(url: string, stamps: number, stop: { done: boolean }): Promise<{ probes: number; maxReadMs: number; maxWriteMs: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let probes = 0;
  let maxReadMs = 0;
  let maxWriteMs = 0;
  try {
    while (!stop.done) {
      const id = 1 + Math.floor(unitRandom('probe', probes) * stamps);
      let at = performance.now();
      await client.query('select id, provider, updated_at from stamps where id = $1', [id]);
      maxReadMs = Math.max(maxReadMs, performance.now() - at);
      at = performance.now();
      // A real write (a new row version under the row lock) that leaves the values as they were.
      await client.query('update stamps set updated_at = updated_at where id = $1', [id]);
      maxWriteMs = Math.max(maxWriteMs, performance.now() - at);
      probes += 1;
    }
  } finally {
    await client.end();
  }
  return { probes, maxReadMs, maxWriteMs };
}

export async function runMigrationProbe(dataset: ScaleDataset, log: (line: string) => void): Promise<ProbeFigures> {
  if (dataset.database !== 'postgres') throw new Error('the migration probe runs on PostgreSQL');
  // The undoing VACUUM of the scale set's stamps runs far past a request's statement budget.
  const database = openDatabase(dataset.databaseUrl, { queryTimeoutMs: 3_600_000 });
  const db = database.db;
  const stamps = dataset.counts.addresses * FULL_SIZE.stampsPerAddress;
  try {
    // Undo leftovers of an interrupted run first, then add the column the backfill fills (metadata only, no rewrite).
    await sql`drop index if exists ${sql.ref(INDEX)}`.execute(db);
    await sql`alter table stamps drop column if exists ${sql.ref(COLUMN)}`.execute(db);
    await sql`alter table stamps add column ${sql.ref(COLUMN)} smallint`.execute(db);
    const stop = { done: false };
    const probing = probe(dataset.databaseUrl, stamps, stop);
    let indexSeconds = 0;
    let backfillSeconds = 0;
    let rowsRewritten = 0;
    try {
      let at = performance.now();
      await createIndexOnline(db, 'postgres', { name: INDEX, table: 'stamps', columns: ['provider', 'created_at'] });
      indexSeconds = (performance.now() - at) / 1000;
      at = performance.now();
      // The set's generated stamps (5 000 000 x size); the batch group's ids after them are left alone.
      rowsRewritten = await backfillInChunks(db, { table: 'stamps', set: `${COLUMN} = 1`, where: `${COLUMN} is null and id <= ${stamps}` });
      backfillSeconds = (performance.now() - at) / 1000;
    } catch (error) {
      // The probe ends at its next statement; the step's error is the one to report.
      stop.done = true;
      await probing.catch(() => {});
      throw error;
    }
    stop.done = true;
    const probed = await probing;
    const round = (n: number) => Math.round(n * 10) / 10;
    return { indexSeconds: round(indexSeconds), backfillSeconds: round(backfillSeconds), rowsRewritten, probes: probed.probes, maxReadMs: round(probed.maxReadMs), maxWriteMs: round(probed.maxWriteMs) };
  } finally {
    log('  migration probe: undoing the step (index, column, vacuum)');
    await sql`drop index if exists ${sql.ref(INDEX)}`.execute(db);
    await sql`alter table stamps drop column if exists ${sql.ref(COLUMN)}`.execute(db);
    await sql`vacuum (analyze) stamps`.execute(db);
    await database.close();
  }
}

/** Runs the probe and prints its figures and PASS/FAIL; true when it passes. */
export async function migrationProbeCase(dataset: ScaleDataset, log: (line: string) => void): Promise<boolean> {
  const f = await runMigrationProbe(dataset, log);
  log(`    migration step   index built online in ${f.indexSeconds} s, ${f.rowsRewritten} rows backfilled in chunks in ${f.backfillSeconds} s; ${f.probes} probes, longest read ${f.maxReadMs} ms, longest write ${f.maxWriteMs} ms`);
  const wait = Math.max(f.maxReadMs, f.maxWriteMs);
  const pass = wait <= MAX_WAIT_MS;
  log(`  ${pass ? 'PASS' : 'FAIL'}  migration step on stamps: no probe read or write waits > ${MAX_WAIT_MS} ms: longest ${wait} ms`);
  return pass;
}
