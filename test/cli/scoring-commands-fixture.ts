/**
 * What every `stampgate` scoring-command test file shares: a fresh database and DATA_DIR per test,
 * and small helpers over the CLI (the development issuer's key, a JSON file in DATA_DIR, issuing a
 * credential, listing an address's stamps).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { afterEach, beforeEach, expect } from 'vitest';
import { loadOrCreateIssuerKey, type StampCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from '../helpers/databases.js';
import { testWallet } from '../helpers/stamps.js';

export type Json = Record<string, any>;

export const second = 1000;
export const minute = 60 * second;
export const hour = 60 * minute;
export const day = 24 * hour;
export const STRANGER_KEY: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';
export const PARTNER = 'did:ethr:0x018d103c154748e8d5a1d7658185125175457f84';
export const alice = testWallet(301).address;
export const bob = testWallet(302).address;

/** Registers the per-test database and DATA_DIR of a describe block; read `env` and `dataDir` inside tests. */
export function scoringCommandsFixture(kind: DatabaseKind) {
  let test: TestDatabase;
  const state = { dataDir: '', env: {} as Record<string, string> };

  beforeEach(async () => {
    test = await createTestDatabase(kind);
    state.dataDir = mkdtempSync(join(tmpdir(), 'stampgate-cli-'));
    state.env = { DATABASE_URL: test.url, DATA_DIR: state.dataDir, STAMPGATE_ENV: 'development' };
  });
  afterEach(async () => {
    await test.drop();
    rmSync(state.dataDir, { recursive: true, force: true });
  });

  return {
    get env() {
      return state.env;
    },
    get dataDir() {
      return state.dataDir;
    },

    /** The development issuer the CLI uses: the key in DATA_DIR (created here first if need be). */
    async devKey(): Promise<Hex> {
      return loadOrCreateIssuerKey(state.dataDir);
    },

    writeJson(name: string, value: unknown): string {
      const file = join(state.dataDir, name);
      writeFileSync(file, JSON.stringify(value, null, 2));
      return file;
    },

    async issueWithCli(args: string[]): Promise<StampCredential> {
      const run = await runCli(['credentials', 'issue', ...args], state.env);
      expect(run.err).toBe('');
      expect(run.code).toBe(0);
      return run.json<StampCredential>();
    },

    async listed(address: string): Promise<Json[]> {
      const run = await runCli(['stamps', 'list', '--address', address, '--json'], state.env);
      expect(run.code).toBe(0);
      return run.json<Json[]>();
    },
  };
}
