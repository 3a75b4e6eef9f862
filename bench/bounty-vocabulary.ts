/**
 * Uncached latency of the original client's bounty vocabulary over 10,000
 * bounties: every filter and every `order_by` name (both directions), through
 * the HTTP layer in process (`app.inject`), with PUBLIC_CACHE_TTL=0 so each
 * request runs its SQL. Target: each under 20 ms.
 *
 *   npx tsx bench/bounty-vocabulary.ts [sqlite|postgres URL] [bounties]
 *
 * Prints, per request shape, the median and the 95th percentile of 15 HTTP
 * requests, and the median of 15 runs of its SQL alone (the repository call:
 * page and total, no rendering), which is what the shape adds to any list.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAppContext } from '../src/app/container.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { bountiesRepository } from '../src/publicdata/bounties/bounties.repository.js';
import { parseBountyQuery } from '../src/publicdata/bounties/bounties.service.js';
import { BOUNTY_ORDER_FIELDS } from '../src/publicdata/bounties/bounty-order.js';
import { buildServer } from '../src/app/server.js';
import { seedBounties } from './bounties-seed.js';

const RUNS = 15;

const filters = [
  'bounty_owner_github_username=owner3',
  'bounty_owner_github_username=owner3,OWNER7,owner11',
  'idx_status=open',
  'idx_status=submitted,done',
  'network=mainnet',
  'network=polygon',
  'standard_bounties_id=300,303,9000',
  'pk__gt=9000',
  'pk__gt=9000&order_by=pk',
  'started=dev5',
  'interested_github_username=dev17',
  'fulfiller_github_username=dev5',
  'raw_data=solidity',
  'raw_data=solidity,gas',
  'is_open=true',
  'is_open=false',
  'is_open=true&network=mainnet&order_by=-value_true',
];

async function main(): Promise<void> {
  const target = process.argv[2] ?? 'sqlite';
  const count = Number(process.argv[3] ?? 10_000);
  const dir = mkdtempSync(join(tmpdir(), 'stampgate-vocab-bench-'));
  const url = target === 'sqlite' ? `sqlite:${join(dir, 'bench.sqlite')}` : target;
  const database = openDatabase(url);
  await migrateToLatest(database);
  const config = loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dir, DATABASE_URL: url, PUBLIC_CACHE_TTL: '0', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000', METRICS_ENABLED: 'false' });
  const ctx = await createAppContext(config, database, { http: true });
  const app = await buildServer(ctx, { logger: false });
  await app.ready();
  try {
    if ((await ctx.publicData.bounties.list({ limit: 1, offset: 0 }, '')).total !== count) {
      await seedBounties(ctx, count);
      await database.db.executeQuery({ sql: target === 'sqlite' ? 'analyze' : 'analyze bounties', parameters: [], query: { kind: 'RawNode' } } as never);
    }
    const shapes = [...filters, ...Object.keys(BOUNTY_ORDER_FIELDS).flatMap((name) => [`order_by=${name}`, `order_by=-${name}`])];
    const repository = bountiesRepository(database.db, database.dialect);
    const results: [string, number, number, number, number][] = [];
    for (const shape of shapes) {
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < RUNS; i++) {
        const start = performance.now();
        const res = await app.inject(`/api/v0.1/bounties/?${shape}`);
        times.push(performance.now() - start);
        if (res.statusCode !== 200) throw new Error(`${shape}: ${res.statusCode} ${res.body}`);
        rows = Number(res.headers['x-total-count']);
      }
      times.sort((a, b) => a - b);
      const query = Object.fromEntries(new URLSearchParams(shape));
      const filter = parseBountyQuery({ ...query, ...(query.pk__gt ? { pk__gt: Number(query.pk__gt) } : {}), limit: 100, offset: 0 });
      const sqlTimes: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const start = performance.now();
        await repository.list(filter, '');
        sqlTimes.push(performance.now() - start);
      }
      sqlTimes.sort((a, b) => a - b);
      results.push([shape, times[Math.floor(RUNS / 2)]!, times[Math.ceil(RUNS * 0.95) - 1]!, rows, sqlTimes[Math.floor(RUNS / 2)]!]);
    }
    const slowest = results.reduce((a, b) => (b[1] > a[1] ? b : a));
    for (const [shape, median, p95, total, sqlMedian] of results) {
      console.log(`${median.toFixed(2).padStart(7)} ms  p95 ${p95.toFixed(2).padStart(7)} ms  sql ${sqlMedian.toFixed(2).padStart(6)} ms  matches ${String(total).padStart(6)}  ${shape}`);
    }
    const slowestSql = results.reduce((a, b) => (b[4] > a[4] ? b : a));
    console.log(
      `\n${database.dialect}, ${count} bounties, ${results.length} shapes; slowest HTTP median: ${slowest[1].toFixed(2)} ms (${slowest[0]}), ` +
        `over 20 ms: ${results.filter((r) => r[1] > 20).length}; slowest SQL median: ${slowestSql[4].toFixed(2)} ms (${slowestSql[0]})`,
    );
  } finally {
    await app.close();
    await ctx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
