/**
 * The uncached bounty list at 10 000 and at 100 000 bounties, whatever the scale set's size: two
 * bounty-only databases seeded by bench/bounties-seed.ts (cached under bench/results/scale/ as the
 * sets are), each served with `PUBLIC_CACHE_TTL=0` and loaded with autocannon (10 connections, 2 s
 * of warm-up, 10 s measured, as `npm run bench`), against the bare-Fastify ceiling of the same run.
 * Targets at 100 000: at least 8.7 % of the ceiling's req/s, and at most 1.5x the server CPU per
 * request of the list at 10 000.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { allMigrations } from '../../src/db/migrations/index.js';
import { bountiesLoad, seedBounties } from '../bounties-seed.js';
import { launchChild } from '../launch.js';
import { runLoad } from '../load.js';
import { freshPostgresDatabase, scaleDatabaseName, type ScaleDatabase, type ScaleDataset } from './build.js';
import { startScaleServer } from './server.js';

const benchDir = fileURLToPath(new URL('..', import.meta.url));
const BOUNTY_COUNTS = [10_000, 100_000] as const;
const LOAD = { connections: 10, warmupSeconds: 2, seconds: 10 } as const;
const SHARE_OF_CEILING = 0.087;
const COST_RATIO = 1.5;

type BountySet = Pick<ScaleDataset, 'databaseUrl' | 'dataDir'> & { hash: string; bounties: number };

function bountySetHash(database: ScaleDatabase, bounties: number): string {
  const hash = createHash('sha256').update(`${database}:${bounties}\n`).update(Object.keys(allMigrations(database)).join('\n'));
  for (const file of ['bounties-seed.ts']) hash.update(readFileSync(join(benchDir, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The bounty-only database of `bounties` bounties, built once and reused while its hash holds. */
async function bountySet(database: ScaleDatabase, bounties: number, log: (line: string) => void): Promise<BountySet> {
  const dir = join(benchDir, 'results', 'scale', `${database}-bounties-${bounties}`);
  const markerFile = join(dir, 'marker.json');
  const hash = bountySetHash(database, bounties);
  if (existsSync(markerFile)) {
    const marker = JSON.parse(readFileSync(markerFile, 'utf8')) as BountySet;
    if (marker.hash === hash) return marker;
  }
  const started = performance.now();
  rmSync(dir, { recursive: true, force: true });
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  let databaseUrl = `sqlite:${join(dir, 'stampgate.sqlite')}`;
  if (database === 'postgres') {
    databaseUrl = await freshPostgresDatabase(scaleDatabaseName(`bounties_${bounties}`));
  }
  const opened = openDatabase(databaseUrl);
  await migrateToLatest(opened);
  const ctx = await createAppContext(loadConfig({ STAMPGATE_ENV: 'development', LOG_LEVEL: 'silent', DATA_DIR: dataDir, DATABASE_URL: databaseUrl }), opened);
  try {
    await seedBounties(ctx, bounties);
  } finally {
    await ctx.close();
  }
  const set: BountySet = { hash, bounties, databaseUrl, dataDir };
  writeFileSync(markerFile, `${JSON.stringify(set, null, 2)}\n`);
  log(`${database}: ${bounties} bounties seeded in ${Math.round((performance.now() - started) / 1000)} s`);
  return set;
}

interface ListFigures {
  bounties: number;
  rps: number;
  p50: number;
  cpuMsPerRequest: number;
}

async function measureList(set: BountySet): Promise<ListFigures> {
  const server = await startScaleServer(set, { PUBLIC_CACHE_TTL: '0' });
  try {
    let cpuBefore = 0;
    let cpuMs = 0;
    const result = await runLoad({
      ...bountiesLoad(),
      ...LOAD,
      url: server.base,
      around: {
        before: async () => {
          cpuBefore = server.cpuMs();
        },
        after: async () => {
          cpuMs = server.cpuMs() - cpuBefore;
        },
      },
    });
    if (result.non2xx > 0 || result.errors > 0 || Object.keys(result.bodyProblems).length > 0) {
      throw new Error(`bounty list at ${set.bounties}: ${result.non2xx} non-2xx, ${result.errors} errors, ${JSON.stringify(result.bodyProblems)}`);
    }
    return { bounties: set.bounties, rps: Math.round(result.rps), p50: Math.round(result.latencyMs.p50 * 100) / 100, cpuMsPerRequest: Math.round((cpuMs / result.requests) * 1000) / 1000 };
  } finally {
    await server.stop();
  }
}

async function measureCeiling(): Promise<number> {
  const ceiling = await launchChild({ kind: 'ceiling' }, 'ceiling', null);
  try {
    const result = await runLoad({ method: 'GET', headers: {}, path: () => '/', ...LOAD, url: `http://127.0.0.1:${ceiling.info.port}` });
    return Math.round(result.rps);
  } finally {
    await ceiling.stop();
  }
}

/** Measures the ceiling and both lists and prints their figures and PASS/FAIL; true when both targets pass. */
export async function bountyCase(database: ScaleDatabase, log: (line: string) => void): Promise<boolean> {
  const sets = [];
  for (const n of BOUNTY_COUNTS) sets.push(await bountySet(database, n, log));
  const ceilingRps = await measureCeiling();
  const [ten, hundred] = [await measureList(sets[0]!), await measureList(sets[1]!)];
  for (const f of [ten, hundred]) {
    log(`    bounty list      ${f.bounties} bounties, uncached, 10 connections: ${f.rps} req/s (${((f.rps / ceilingRps) * 100).toFixed(1)} % of the ceiling's ${ceilingRps}), p50 ${f.p50} ms, server CPU ${f.cpuMsPerRequest} ms/request`);
  }
  const share = hundred.rps / ceilingRps;
  const ratio = hundred.cpuMsPerRequest / ten.cpuMsPerRequest;
  const fast = share >= SHARE_OF_CEILING;
  const flat = ratio <= COST_RATIO;
  log(`  ${fast ? 'PASS' : 'FAIL'}  uncached bounty list at 100000 >= ${SHARE_OF_CEILING * 100} % of the ceiling's req/s: ${(share * 100).toFixed(1)} % (${hundred.rps} of ${ceilingRps})`);
  log(`  ${flat ? 'PASS' : 'FAIL'}  uncached bounty list cost at 100000 <= ${COST_RATIO}x at 10000: ${ten.cpuMsPerRequest} -> ${hundred.cpuMsPerRequest} ms CPU (${ratio.toFixed(2)}x)`);
  return fast && flat;
}
