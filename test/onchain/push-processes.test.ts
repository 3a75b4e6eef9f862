/**
 * The operator push with real `stampgate` processes (src/ transpiled once by esbuild, see
 * buildCli) and real contracts on anvil, on both databases:
 *
 * - 50 addresses with real stamps queued with `onchain push --no-wait`; a `stampgate worker` is
 *   killed with SIGKILL once some receipts are in and while at least one signed transaction waits
 *   in the node's pool unmined (anvil's automine paused); another worker finishes the job. Every
 *   address is then attested exactly once: the sender's transaction count equals the 50 items,
 *   EAS logged one score attestation per recipient, and the decoder says `isHuman` for each;
 * - `onchain push-status JOB` prints the per-address lines; a second push of the same list (its
 *   scores unchanged) prints `skipped` for each, as `--json` objects, and sends nothing;
 * - with no worker running, the waiting command says so (refusals: push-worker.test.ts, in-process).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Address, getAddress, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext, type AppContext } from '../../src/app/container.js';
import { describeSettings, loadConfig } from '../../src/config/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, databaseKinds, type DatabaseKind, type TestDatabase } from '../helpers/databases.js';
import { decoderAbi, type DeployedChain, startDeployedChain, temporaryDeploymentFile } from '../helpers/onchain-chain.js';
import { anvilKey } from '../helpers/onchain.js';
import { buildCli, cliEnvironment, RunningCli, waitFor } from '../helpers/processes.js';
import { giveStamps } from '../helpers/stamps.js';

const run = promisify(execFile);
const settingNames = describeSettings().map((s) => s.name);
const attested = parseAbi(['event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)']);
let workDir: string;
let cliPath: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'stampgate-push-proc-'));
  cliPath = await buildCli(join(workDir, 'build'));
}, 120_000);
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

async function anvilRpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

describe.each(databaseKinds)('onchain push with real processes on %s', (kind: DatabaseKind) => {
  const signerKey = generatePrivateKey();
  const senderKey = anvilKey(kind === 'sqlite' ? 6 : 7);
  const sender = privateKeyToAccount(senderKey).address;
  const deploymentFile = temporaryDeploymentFile();
  const addresses = Array.from({ length: 50 }, (_, i) => `0x${(0xb0b0000 + i).toString(16).padStart(40, '0')}`);
  let chain: DeployedChain;
  let test: TestDatabase;
  let ctx: AppContext;
  let dataDir: string;
  let scorerId: number;
  let listFile: string;
  const workers: RunningCli[] = [];

  const env = (extra: Record<string, string> = {}) =>
    cliEnvironment(settingNames, {
      STAMPGATE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: test.url,
      ONCHAIN_CONFIG_FILE: deploymentFile,
      ATTESTATION_SIGNER_KEY: signerKey,
      ONCHAIN_SENDER_KEY: senderKey,
      ONCHAIN_PUSH_LEASE_MS: '2000',
      ...extra,
    });

  async function stampgate(args: string[], extra: Record<string, string> = {}) {
    try {
      const { stdout, stderr } = await run(process.execPath, [cliPath, ...args], { env: env(extra), cwd: workDir, timeout: 90_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  function startWorker(label: string, extra: Record<string, string> = {}): RunningCli {
    const worker = new RunningCli(label, cliPath, ['worker'], env(extra), workDir);
    workers.push(worker);
    return worker;
  }

  const sentCount = () => chain.anvil.publicClient.getTransactionCount({ address: sender });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(workDir, 'data-'));
    chain = await startDeployedChain(kind === 'sqlite' ? 31337 : 31338, privateKeyToAccount(signerKey), deploymentFile);
    test = await createTestDatabase(kind);
    const database = test.open();
    await migrateToLatest(database);
    ctx = await createAppContext(loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: test.url }), database);
    const account = await ctx.accounts.createAccount('airdrop');
    scorerId = (await ctx.accounts.createScorer(account.id, { name: 'airdrop', threshold: '20', weights: { Google: '15', Discord: '10' } })).id;
    for (const address of addresses) await giveStamps(ctx, address, ['Google', 'Discord']);
    listFile = join(dataDir, 'addresses.csv');
    writeFileSync(listFile, `address\n${addresses.join('\n')}\n`);
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) await worker.stop('SIGKILL').catch(() => {});
    await ctx?.close();
    await test?.drop();
    await chain?.anvil.stop();
  });

  let jobId: string;

  it('attests all 50 addresses exactly once across a worker killed with SIGKILL mid-way', async () => {
    const queued = await stampgate(['onchain', 'push', '--chain', String(chain.anvil.chain.id), '--scorer', String(scorerId), '--file', listFile, '--no-wait']);
    expect(queued.code, queued.stderr).toBe(0);
    jobId = queued.stdout.trim();
    expect(jobId).toMatch(/^push_[0-9a-f]{24}$/);

    const first = startWorker('worker 1', { ONCHAIN_PUSH_CONCURRENCY: '2' });
    const counts = async () => (await ctx.onchain.push.service.job(jobId)).counts;
    await waitFor('some receipts', 60_000, async () => (await counts()).attested >= 10, 20);
    // Transactions broadcast from now on wait in the pool: the worker dies with some sent, unmined.
    await anvilRpc(chain.anvil.url, 'evm_setAutomine', [false]);
    await waitFor('a transaction in the pool', 20_000, async () => (await counts()).sent >= 1, 20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.stop('SIGKILL');
    const atKill = await counts();
    expect(atKill.attested).toBeGreaterThanOrEqual(10);
    expect(atKill.attested).toBeLessThan(50);
    expect(atKill.sent).toBeGreaterThanOrEqual(1);
    await anvilRpc(chain.anvil.url, 'evm_setAutomine', [true]);
    await anvilRpc(chain.anvil.url, 'evm_mine');

    startWorker('worker 2');
    const status = await stampgate(['onchain', 'push-status', jobId]);
    expect(status.code, status.stderr).toBe(0);
    const lines = status.stdout.trim().split('\n');
    expect(lines).toHaveLength(50);
    const uids = new Set<string>();
    lines.forEach((line, i) => {
      const [address, word, uid, tx] = line.split(' ');
      expect([address, word]).toEqual([addresses[i], 'attested']);
      expect(uid).toMatch(/^0x[0-9a-f]{64}$/);
      expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
      uids.add(uid!);
    });
    expect(uids.size).toBe(50);

    expect(await sentCount()).toBe(50);
    const logs = await chain.anvil.publicClient.getLogs({ address: chain.deployment.eas as Address, event: attested[0], fromBlock: 0n, toBlock: 'latest' });
    const scoreLogs = logs.filter((log) => log.args.schemaUID === chain.deployment.score_schema_uid);
    const perRecipient = new Map<string, number>();
    for (const log of scoreLogs) perRecipient.set(log.args.recipient!.toLowerCase(), (perRecipient.get(log.args.recipient!.toLowerCase()) ?? 0) + 1);
    expect([...perRecipient.keys()].sort()).toEqual([...addresses].sort());
    expect([...perRecipient.values()].every((n) => n === 1)).toBe(true);
    const decoder = chain.deployment.decoder as Address;
    for (const address of addresses) {
      const user = getAddress(address);
      expect(await chain.anvil.publicClient.readContract({ address: decoder, abi: decoderAbi, functionName: 'isHuman', args: [BigInt(scorerId), user] })).toBe(true);
      const [score, passing] = (await chain.anvil.publicClient.readContract({ address: decoder, abi: decoderAbi, functionName: 'getScore', args: [BigInt(scorerId), user] })) as [bigint, boolean];
      expect([score, passing]).toEqual([250_000n, true]);
    }
  }, 150_000);

  it('skips every address of the same list pushed again, sending nothing, one JSON object per line', async () => {
    const again = await stampgate(['onchain', 'push', '--chain', String(chain.anvil.chain.id), '--scorer', String(scorerId), '--file', listFile, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const objects = again.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(objects).toEqual(addresses.map((address) => ({ address, status: 'skipped', uid: null, tx_hash: null, reason: null })));
    expect(again.stderr).toMatch(/^Queued push push_[0-9a-f]{24}: 50 address\(es\)/);
    expect(again.stderr).toContain('50/50 done');
    expect(await sentCount()).toBe(50);
  }, 60_000);

  it('says on stderr that no worker runs while it waits for one', async () => {
    for (const worker of workers) await worker.stop('SIGTERM').catch(() => worker.stop('SIGKILL'));
    const fresh = `0x${'c0ffee'.padStart(40, '0')}`;
    const file = join(dataDir, 'one.csv');
    writeFileSync(file, `${fresh}\n`);
    // A short scoring lease: the stopped workers' last beats count as gone after it.
    const waiting = new RunningCli('push', cliPath, ['onchain', 'push', '--chain', String(chain.anvil.chain.id), '--scorer', String(scorerId), '--file', file], env({ SCORING_LEASE_MS: '200', SCORING_POLL_MS: '50' }), workDir);
    try {
      await waitFor('the no-worker note', 20_000, () => waiting.lines.some((line) => line.includes('No worker is running')));
      expect(waiting.exit).toBeNull();
    } finally {
      await waiting.stop('SIGKILL');
    }
  }, 30_000);
});
