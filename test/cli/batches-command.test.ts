import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');

describe.each(databaseKinds)('stampgate batches on %s', (kind) => {
  let test: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    test = await createTestDatabase(kind);
    dataDir = mkdtempSync(join(tmpdir(), 'stampgate-cli-'));
    env = { DATABASE_URL: test.url, DATA_DIR: dataDir, STAMPGATE_ENV: 'development', BATCH_CHUNK_SIZE: '7', BATCH_POLL_MS: '20' };
  });
  afterEach(async () => {
    await test.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function scorer(): Promise<number> {
    const account = (await runCli(['accounts', 'create', '--name', 'Batch account', '--json'], env)).json();
    return (await runCli(['scorers', 'create', '--account', String(account.id), '--name', 'S', '--json'], env)).json().id;
  }

  it('runs a CSV file to the end in-process, reports progress on stderr and writes one NDJSON result per line', async () => {
    const scorerId = await scorer();
    const addresses = Array.from({ length: 30 }, (_, i) => addressNo(i + 1));
    const file = join(dataDir, 'addresses.csv');
    writeFileSync(file, `address\n${addresses.join('\n')}\n`);
    const out = join(dataDir, 'results.ndjson');
    const run = await runCli(['batches', 'run', file, '--scorer', String(scorerId), '--out', out], env);
    expect(run.code).toBe(0);
    expect(run.err).toMatch(/Created batch bat_\S+ \(30 addresses\)/);
    expect(run.err).toMatch(/30\/30 scored, 0 failed/);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.address)).toEqual(addresses);

    const id = /Created batch (bat_\S+)/.exec(run.err)![1]!;
    const status = await runCli(['batches', 'status', id, '--json'], env);
    expect(status.json()).toMatchObject({ id, status: 'DONE', total: 30, done: 30, failed: 0 });
    // An ended batch is not cancelled after the fact.
    expect((await runCli(['batches', 'cancel', id, '--json'], env)).json().status).toBe('DONE');
  });

  it('refuses a file with a bad line (exit 1, nothing created) and an unknown batch', async () => {
    const scorerId = await scorer();
    const file = join(dataDir, 'bad.csv');
    writeFileSync(file, `${addressNo(1)}\n0xnope\n`);
    const run = await runCli(['batches', 'run', file, '--scorer', String(scorerId)], env);
    expect(run.code).toBe(1);
    expect(run.err).toContain('Line 2');
    const missing = await runCli(['batches', 'status', 'bat_AAAAAAAAAAAAAAAA'], env);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no batch');
  });
});
