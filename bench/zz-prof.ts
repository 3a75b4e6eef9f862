import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAppContext } from '../src/app/container.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { choosePoolProviders, serverEnv, writeCredentials } from './fixtures.js';

import BetterSqlite from 'better-sqlite3';
const timing = new Map<string, { n: number; ms: number }>();
let on = false;
const prepare = BetterSqlite.prototype.prepare;
(BetterSqlite.prototype as any).prepare = function (this: any, source: string) {
  const stmt = prepare.call(this, source);
  for (const m of ['all', 'run', 'get', 'iterate'] as const) {
    const orig = (stmt as any)[m].bind(stmt);
    (stmt as any)[m] = (...args: unknown[]) => {
      const t0 = performance.now();
      try { return orig(...args); } finally {
        if (on) { const k = source.slice(0, 90); const e = timing.get(k) ?? { n: 0, ms: 0 }; e.n++; e.ms += performance.now() - t0; timing.set(k, e); }
      }
    };
  }
  return stmt;
};
const n = Number(process.env.N ?? 1000);
const step = Number(process.env.STEP ?? 100);
const dataDir = mkdtempSync(join(tmpdir(), 'prof-'));
const url = process.env.URL ?? `sqlite:${join(dataDir, 'db.sqlite')}`;
const file = join(dataDir, 'creds.json');
await writeCredentials(dataDir, file, choosePoolProviders().providers, n);
const db = openDatabase(url);
await migrateToLatest(db);
const ctx = await createAppContext(loadConfig({ ...serverEnv(dataDir, url), BATCH_CONCURRENCY: '0' }), db);
const docs = JSON.parse(readFileSync(file, 'utf8')) as { address: string; credentials: unknown[] }[];
await ctx.stamps.importCredentials(docs.flatMap((d) => d.credentials) as never);
const addresses = docs.map((d) => d.address);
const account = await ctx.accounts.createAccount('p');
on = true;
for (let r = 0; r < 4; r++) {
  const scorer = await ctx.accounts.createScorer(account.id, { name: `s${r}`, type: 'weighted' });
  const t0 = performance.now();
  for (let i = 0; i < addresses.length; i += step) await ctx.v2.scores.scoreChunk(scorer.id, account.id, addresses.slice(i, i + step), async () => {});
  const s = (performance.now() - t0) / 1000;
  console.log(`round ${r}: ${Math.round(addresses.length / s)} addr/s`);
}
for (const [k, v] of [...timing].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) console.log(v.ms.toFixed(0).padStart(6), 'ms', String(v.n).padStart(6), k);
await ctx.close();
