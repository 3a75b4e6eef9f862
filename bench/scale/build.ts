/**
 * The scale data set (`npm run bench:scale -- --build [--size 0.1] [--database sqlite|postgres]`):
 * generated addresses scored by two scorers with their stamps, holds and score events (rows from
 * bench/scale/generator.ts), bounties and contributions through the import's writers, and a pool
 * of addresses holding 20 real signed credentials that the bench submits. Built once per size and
 * database and kept under bench/results/scale/; rebuilt when the migration list, the generator or
 * this file changes (a hash in the marker file).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { createAppContext, type AppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { allMigrations } from '../../src/db/migrations/index.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { seedBounties } from '../bounties-seed.js';
import { choosePoolProviders, writeCredentials } from '../fixtures.js';
import { writeBatchGroup } from './batch-group.js';
import { seedContributions } from './contributions.js';
import {
  DAY_MS,
  FULL_SIZE,
  firstScoringRows,
  providersOf,
  restatedCredential,
  scaleAddress,
  scaleCounts,
  type ScaleCounts,
  type ScoringContext,
  stampRow,
  unitRandom,
} from './generator.js';

export type ScaleDatabase = 'sqlite' | 'postgres';

const benchDir = fileURLToPath(new URL('..', import.meta.url));
const scaleDir = join(benchDir, 'results', 'scale');
/** Addresses the bench submits: real signed credentials, 20 each, imported through the service. */
export const POOL_ADDRESSES = 200;
const CHUNK_ADDRESSES = 1000;
/** Bind parameters per statement, below SQLite's 32766 and PostgreSQL's 65535. */
const MAX_PARAMETERS = 30_000;

export interface ScaleDataset {
  hash: string;
  database: ScaleDatabase;
  size: number;
  databaseUrl: string;
  dataDir: string;
  apiKey: string;
  accountId: number;
  scorerIds: [number, number];
  counts: ScaleCounts;
  /** The pool's credentials file (`[{address, credentials}]`). */
  poolFile: string;
  buildSeconds: number;
  databaseBytes: number;
  /** The time the generated scores were spread back from (epoch ms). */
  builtAt: number;
  /** Addresses of the batch group (bench/scale/batch-group.ts): never scored, 20 stamps each. */
  batchAddresses: number;
}

export function postgresServerUrl(): string {
  return process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/**
 * The PostgreSQL database of a scale set (`<prefix>_<suffix>`): BENCH_SCALE_DATABASE_PREFIX, else
 * `stampgate_scale`. Two checkouts benching on one server need prefixes of their own, since a
 * build drops and creates its database.
 */
export function scaleDatabaseName(suffix: string): string {
  return `${process.env.BENCH_SCALE_DATABASE_PREFIX ?? 'stampgate_scale'}_${suffix.replace(/\W/g, '_')}`;
}

/** What the data set depends on: a change to any of it makes the cached set stale. */
export function datasetHash(database: ScaleDatabase, size: number): string {
  const hash = createHash('sha256').update(`${database}:${size}\n`).update(Object.keys(allMigrations(database)).join('\n'));
  for (const file of ['scale/generator.ts', 'scale/build.ts', 'scale/batch-group.ts', 'scale/contributions.ts', 'bounties-seed.ts', 'fixtures.ts']) hash.update(readFileSync(join(benchDir, file)));
  return hash.digest('hex').slice(0, 16);
}

function setDir(database: ScaleDatabase, size: number): string {
  return join(scaleDir, `${database}-${size}`);
}

/**
 * The cached data set if its marker matches the current schema and generator and its batch group
 * holds at least `batchAddresses` addresses (a run may score fewer than were built), else null.
 */
export function cachedDataset(database: ScaleDatabase, size: number, batchAddresses = 0): ScaleDataset | null {
  const markerFile = join(setDir(database, size), 'marker.json');
  if (!existsSync(markerFile)) return null;
  const marker = JSON.parse(readFileSync(markerFile, 'utf8')) as ScaleDataset;
  return marker.hash === datasetHash(database, size) && (marker.batchAddresses ?? 0) >= batchAddresses ? marker : null;
}

/** Drops (if it exists) and creates the PostgreSQL database `name` on the bench's server; its URL. */
export async function freshPostgresDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: postgresServerUrl() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresServerUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function freshDatabaseUrl(database: ScaleDatabase, size: number, dir: string): Promise<string> {
  if (database === 'sqlite') {
    const file = join(dir, 'stampgate.sqlite');
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    return `sqlite:${file}`;
  }
  return freshPostgresDatabase(scaleDatabaseName(String(size)));
}

export async function insertRows(db: Kysely<any>, table: string, rows: object[]): Promise<void> {
  if (rows.length === 0) return;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(rows[0]!).length));
  for (let at = 0; at < rows.length; at += perStatement) await db.insertInto(table).values(rows.slice(at, at + perStatement)).execute();
}

/**
 * Event ids in time order across both kinds of event: address i was scored first (scorer 1, four
 * of its stamps) at base + (i - half) steps and last (both scorers, all five) at base + i steps.
 */
export function eventIds(i: number, addresses: number): { earlier: number; latest: [number, number] } {
  const half = Math.floor(addresses / 2);
  const earlier = i + 2 * Math.max(0, i - half) + 1;
  const before = Math.min(addresses, i + half + 1) + 2 * i;
  return { earlier, latest: [before + 1, before + 2] };
}

export interface GeneratedAddressRows {
  stamps: ReturnType<typeof stampRow>[];
  holds: ReturnType<typeof firstScoringRows>['holds'];
  scores: ReturnType<typeof firstScoringRows>['score'][];
  events: ReturnType<typeof firstScoringRows>['event'][];
}

/** Every row of generated address i, for the data set's two scorers. */
export function generatedAddressRows(
  i: number,
  counts: ScaleCounts,
  builtAt: number,
  templates: ReadonlyMap<string, unknown>,
  scorers: [ScoringContext, ScoringContext],
): GeneratedAddressRows {
  const address = scaleAddress(i);
  const step = Math.floor((60 * DAY_MS) / counts.addresses);
  const half = Math.floor(counts.addresses / 2);
  const base = builtAt - 60 * DAY_MS;
  const latestAt = base + i * step;
  const earlierAt = base + (i - half) * step;
  const storedAt = earlierAt - 1000;
  const providers = providersOf(i, [...templates.keys()]);
  const stamps = providers.map((provider, k) => {
    // Issued up to 100 days before they were stored, valid 90 days: some have expired when scored.
    const issuedAt = Math.floor((storedAt - unitRandom(`issued:${k}`, i) * 100 * DAY_MS) / 1000) * 1000;
    const nullifier = `v0:${provider}:${address}:${createHash('sha256').update(`scale-nullifier:${i}:${provider}`).digest('hex')}`;
    const credential = restatedCredential(templates.get(provider), address, nullifier, issuedAt, issuedAt + 90 * DAY_MS);
    return stampRow(i * providers.length + k + 1, credential, address, storedAt);
  });
  const ids = eventIds(i, counts.addresses);
  const earlier = firstScoringRows(scorers[0], address, stamps.slice(0, -1), earlierAt, ids.earlier);
  const latest = scorers.map((scorer, s) => firstScoringRows(scorer, address, stamps, latestAt + s, ids.latest[s as 0 | 1]));
  // Holds are never deleted: the earlier scoring's stay unless the later one claimed the nullifier again.
  const holds = new Map(earlier.holds.map((h) => [`${h.scorer_id}:${h.nullifier}`, h]));
  for (const row of latest) for (const h of row.holds) holds.set(`${h.scorer_id}:${h.nullifier}`, h);
  return { stamps, holds: [...holds.values()], scores: latest.map((r) => r.score), events: [earlier.event, ...latest.map((r) => r.event)] };
}

async function setupAccount(ctx: AppContext) {
  const account = await ctx.accounts.createAccount('Scale bench');
  const first = await ctx.accounts.createScorer(account.id, { name: 'scale one', type: 'weighted' });
  const second = await ctx.accounts.createScorer(account.id, { name: 'scale two', type: 'weighted' });
  const { key } = await ctx.apiKeys.create(account.id, { tier: 4, permissions: ['submit_passports', 'read_scores', 'historical_endpoint'] });
  return { account, scorers: [first, second] as const, key };
}

function templateCredentials(ctx: AppContext, builtAt: number): Map<string, unknown> {
  const providers = [...ctx.catalogue.defaultWeights.entries()].filter(([, weight]) => Number(weight) > 0).map(([name]) => name);
  const address = scaleAddress(-1);
  const key = ctx.devIssuerKey!;
  return new Map(providers.map((provider) => [provider, issueCredential({ privateKey: key, address, provider, issuedAt: new Date(builtAt), expiresAt: new Date(builtAt + 90 * DAY_MS) })]));
}

function databaseBytes(database: ScaleDatabase, url: string, db: Kysely<any>): Promise<number> {
  if (database === 'sqlite') {
    const file = url.slice('sqlite:'.length);
    return Promise.resolve(['', '-wal'].reduce((sum, suffix) => sum + (existsSync(file + suffix) ? statSync(file + suffix).size : 0), 0));
  }
  return sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(db).then((r) => Number(r.rows[0]!.n));
}

/** Builds the data set (or returns the cached one) with a batch group of `batchAddresses`; `log` hears progress. */
export async function buildScaleDataset(database: ScaleDatabase, size: number, log: (line: string) => void, force = false, batchAddresses = 0): Promise<ScaleDataset> {
  const cached = force ? null : cachedDataset(database, size, batchAddresses);
  if (cached) {
    log(`${database} ${size}: cached (${cached.hash}), built in ${cached.buildSeconds} s, ${(cached.databaseBytes / 2 ** 20).toFixed(0)} MiB`);
    return cached;
  }
  const started = performance.now();
  const dir = setDir(database, size);
  rmSync(dir, { recursive: true, force: true });
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const databaseUrl = await freshDatabaseUrl(database, size, dir);
  // A build's bulk statements (the final VACUUM ANALYZE of millions of rows) run far past a request's budget.
  const opened = openDatabase(databaseUrl, { queryTimeoutMs: 3_600_000 });
  await migrateToLatest(opened);
  const ctx = await createAppContext(loadConfig({ STAMPGATE_ENV: 'development', LOG_LEVEL: 'silent', DATA_DIR: dataDir, DATABASE_URL: databaseUrl }), opened);
  try {
    const counts = scaleCounts(size);
    const builtAt = Date.now();
    const { account, scorers, key } = await setupAccount(ctx);
    const trusted = await ctx.issuers.current();
    const contextOf = (scorer: (typeof scorers)[number]): ScoringContext => ({ scorerId: scorer.id, scorer, trusted, catalogue: ctx.catalogue });
    const contexts: [ScoringContext, ScoringContext] = [contextOf(scorers[0]), contextOf(scorers[1])];
    const templates = templateCredentials(ctx, builtAt);
    const db = ctx.database.db as unknown as Kysely<any>;
    for (let from = 0; from < counts.addresses; from += CHUNK_ADDRESSES) {
      const rows: GeneratedAddressRows = { stamps: [], holds: [], scores: [], events: [] };
      for (let i = from; i < Math.min(counts.addresses, from + CHUNK_ADDRESSES); i++) {
        const generated = generatedAddressRows(i, counts, builtAt, templates, contexts);
        for (const part of ['stamps', 'holds', 'scores', 'events'] as const) (rows[part] as object[]).push(...generated[part]);
      }
      await db.transaction().execute(async (trx) => {
        await insertRows(trx, 'stamps', rows.stamps);
        await insertRows(trx, 'nullifier_holds', rows.holds);
        await insertRows(trx, 'score_events', rows.events);
        await insertRows(trx, 'scores', rows.scores);
      });
      if ((from / CHUNK_ADDRESSES) % 50 === 0) log(`${database} ${size}: ${from + CHUNK_ADDRESSES} of ${counts.addresses} addresses, ${Math.round((performance.now() - started) / 1000)} s`);
    }
    if (batchAddresses > 0) {
      log(`${database} ${size}: batch group of ${batchAddresses} addresses`);
      await writeBatchGroup(db, batchAddresses, counts.addresses * FULL_SIZE.stampsPerAddress, builtAt, templates, insertRows, log);
    }
    if (database === 'postgres') {
      // Explicit ids leave the identity sequences behind: the service's next rows take the ids after them.
      for (const table of ['stamps', 'score_events']) await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(db);
    }
    log(`${database} ${size}: bounties and contributions`);
    await seedBounties(ctx, counts.bounties);
    await seedContributions(ctx, counts);
    const poolFile = join(dir, 'pool.json');
    const { providers } = choosePoolProviders();
    await writeCredentials(dataDir, poolFile, providers, POOL_ADDRESSES);
    const documents = JSON.parse(readFileSync(poolFile, 'utf8')) as { credentials: unknown[] }[];
    const report = await ctx.stamps.importCredentials(documents.flatMap((d) => d.credentials) as never);
    if (report.rejected > 0) throw new Error(`scale data set: ${report.rejected} pool credentials refused`);
    log(`${database} ${size}: analyze`);
    await sql.raw(database === 'postgres' ? 'vacuum (analyze)' : 'analyze').execute(db);
    const dataset: ScaleDataset = {
      hash: datasetHash(database, size),
      database,
      size,
      databaseUrl,
      dataDir,
      apiKey: key,
      accountId: account.id,
      scorerIds: [scorers[0].id, scorers[1].id],
      counts,
      poolFile,
      buildSeconds: Math.round((performance.now() - started) / 100) / 10,
      databaseBytes: await databaseBytes(database, databaseUrl, db),
      builtAt,
      batchAddresses,
    };
    writeFileSync(join(dir, 'marker.json'), `${JSON.stringify(dataset, null, 2)}\n`);
    log(`${database} ${size}: built in ${dataset.buildSeconds} s, ${(dataset.databaseBytes / 2 ** 20).toFixed(0)} MiB`);
    return dataset;
  } finally {
    await ctx.close();
  }
}
