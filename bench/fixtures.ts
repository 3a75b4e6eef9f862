/**
 * The benchmark's fixtures: the address pool with its stamps (issued by the
 * development issuer) and a throw-away PostgreSQL database.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { DatabaseKind } from './protocol.js';
import { issueCredential, loadOrCreateIssuerKey } from '../src/scoring/stamps/dev-issuer.js';

const repoDir = fileURLToPath(new URL('..', import.meta.url));
export const STAMPS_PER_ADDRESS = 20;
const DAY_MS = 86_400_000;

interface CatalogueJson {
  threshold: string;
  platforms: { groups: { stamps: { name: string; weight: string; deprecated?: boolean }[] }[] }[];
}

/** Decimal text → integer in units of 1e-5 (catalogue weights have at most 3 fraction digits). */
function toFifthDigits(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  if (fraction.length > 5) throw new Error(`unexpected precision in ${text}`);
  return BigInt(whole ?? '0') * 100_000n + BigInt(fraction.padEnd(5, '0'));
}

function formatFifthDigits(value: bigint): string {
  return `${value / 100_000n}.${(value % 100_000n).toString().padStart(5, '0')}`;
}

export function choosePoolProviders() {
  const catalogue = JSON.parse(readFileSync(join(repoDir, 'assets', 'stamp-catalogue.json'), 'utf8')) as CatalogueJson;
  const stamps = catalogue.platforms
    .flatMap((p) => p.groups.flatMap((g) => g.stamps))
    .filter((s) => !s.deprecated && toFifthDigits(s.weight) > 0n)
    .slice(0, STAMPS_PER_ADDRESS);
  if (stamps.length < STAMPS_PER_ADDRESS) throw new Error(`the catalogue has only ${stamps.length} usable providers`);
  const raw = stamps.reduce((sum, s) => sum + toFifthDigits(s.weight), 0n);
  return {
    providers: stamps.map((s) => s.name),
    expectedRawScore: formatFifthDigits(raw),
    expectedScore: raw >= toFifthDigits(catalogue.threshold) ? '1.00000' : '0.00000',
  };
}

export async function writeCredentials(dataDir: string, file: string, providers: string[], count: number): Promise<{ addresses: string[]; ms: number }> {
  const start = performance.now();
  const privateKey = await loadOrCreateIssuerKey(dataDir);
  const expiresAt = new Date(Date.now() + 90 * DAY_MS);
  const addresses = Array.from({ length: count }, () => `0x${randomBytes(20).toString('hex')}`);
  const documents = addresses.map((address) => ({
    address,
    credentials: providers.map((provider) => issueCredential({ privateKey, address, provider, expiresAt })),
  }));
  writeFileSync(file, JSON.stringify(documents));
  return { addresses, ms: Math.round(performance.now() - start) };
}

// ---------------------------------------------------------------------------
// PostgreSQL throw-away database

export async function createPostgresDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> } | { unreachable: string }> {
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => {});
    return { unreachable: (error as Error).message || String(error) };
  }
  const name = `stampgate_bench_${Date.now()}_${process.pid}`;
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const dropper = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
      await dropper.connect();
      try {
        await dropper.query(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}


/** Settings the benchmark fixes for the Stampgate server; every other one comes from the environment. */
export function serverEnv(dataDir: string, databaseUrl: string): Record<string, string> {
  return {
    STAMPGATE_ENV: 'development',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    // Far above what a run can spend, so the rate limit is exercised but never refuses.
    RATE_LIMIT_TIER4: '100000000',
    // The public data API's per-address budget likewise: the load generator is one address.
    PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000',
    HOST: '127.0.0.1',
    PORT: '0',
  };
}

/** A case's own data folder and database (a SQLite file in it, or a throw-away PostgreSQL database); `release` removes both. */
export interface CaseDatabase {
  dir: string;
  databaseUrl: string;
  release(): Promise<void>;
}

export async function caseDatabase(database: DatabaseKind, postgresUrl: string, label: string): Promise<CaseDatabase | { unreachable: string }> {
  const dir = mkdtempSync(join(tmpdir(), `stampgate-bench-${label}-`));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  if (database === 'sqlite') return { dir, databaseUrl: `sqlite:${join(dir, 'stampgate.sqlite')}`, release: async () => removeDir() };
  const created = await createPostgresDatabase(postgresUrl);
  if ('unreachable' in created) {
    removeDir();
    return created;
  }
  return {
    dir,
    databaseUrl: created.url,
    release: async () => {
      await created.drop().catch(() => {});
      removeDir();
    },
  };
}
