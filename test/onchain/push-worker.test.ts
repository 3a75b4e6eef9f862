/**
 * The operator push's worker in-process, on both databases, against real contracts on anvil: a
 * list attested once (the decoder answers for each), the same list again skipped without a
 * transaction, a refusal of the verifier reported by its custom error name, and an RPC endpoint
 * cut in the middle of a push (the worker keeps going and finishes once it is back); and the
 * command's refusals (exit 2, one line, nothing queued), run in-process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Address, getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { decoderAbi, type DeployedChain, startDeployedChain, temporaryDeploymentFile, verifierAbi } from '../helpers/onchain-chain.js';
import { runCli } from '../helpers/cli.js';
import { anvilKey } from '../helpers/onchain.js';
import { waitFor } from '../helpers/processes.js';
import { giveStamps } from '../helpers/stamps.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const addressNo = (n: number) => `0x${(0xa11ce000 + n).toString(16).padStart(40, '0')}`;

describe.each(databaseKinds)('the push worker on %s', (kind) => {
  const signerKey = generatePrivateKey();
  const deploymentFile = temporaryDeploymentFile();
  const senderKey = anvilKey(kind === 'sqlite' ? 4 : 5);
  const sender = privateKeyToAccount(senderKey).address;
  let chain: DeployedChain;
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    chain = await startDeployedChain(31337, privateKeyToAccount(signerKey), deploymentFile);
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(chain.anvil.url).port));
    t = await createTestApp(kind, {
      ONCHAIN_CONFIG_FILE: deploymentFile,
      ATTESTATION_SIGNER_KEY: signerKey,
      ONCHAIN_SENDER_KEY: senderKey,
      // Through the proxy, so that a test can cut the endpoint.
      ONCHAIN_RPC_URL_31337: `http://127.0.0.1:${proxy.port}`,
      OUTBOUND_TIMEOUT_MS: '1000',
      // One transaction at a time: slow enough for a test to cut the endpoint between two of them.
      ONCHAIN_PUSH_CONCURRENCY: '1',
    });
    t.ctx.onchain.push.worker.start();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await chain?.anvil.stop();
  });
  afterEach(async () => proxy.restore());

  async function scorer() {
    const account = await t.ctx.accounts.createAccount(`push ${Math.random()}`);
    return t.ctx.accounts.createScorer(account.id, { name: 'push', threshold: '20', weights: { Google: '15', Discord: '10' } });
  }

  async function pushed(scorerId: number, addresses: string[]) {
    const job = await t.ctx.onchain.push.service.create(31337, scorerId, `address\n${addresses.join('\n')}\n`);
    await waitFor('the push to finish', 60_000, async () => (await t.ctx.onchain.push.service.job(job.id)).status === 'done', 50);
    return t.ctx.onchain.push.service.results(job.id, 0, 1000);
  }

  const anvilRpc = async (method: string, params: unknown[] = []) => {
    const res = await fetch(chain.anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
  };
  const sentCount = () => chain.anvil.publicClient.getTransactionCount({ address: sender });
  const isHuman = (scorerId: number, address: string) =>
    chain.anvil.publicClient.readContract({ address: chain.deployment.decoder as Address, abi: decoderAbi, functionName: 'isHuman', args: [BigInt(scorerId), getAddress(address)] });

  it('attests every address once, with the UID and transaction of its receipt, and skips the same list a second time', async () => {
    const { id } = await scorer();
    const addresses = [0, 1, 2, 3, 4].map((n) => addressNo(n + (kind === 'sqlite' ? 0 : 100)));
    for (const address of addresses) await giveStamps(t.ctx, address, ['Google', 'Discord']);
    const before = await sentCount();
    const first = await pushed(id, [...addresses, addresses[0]!.toUpperCase().replace('0X', '0x')]);
    expect(first.map((r) => [r.address, r.status])).toEqual(addresses.map((a) => [a, 'attested']));
    for (const result of first) {
      expect(result.uid).toMatch(/^0x[0-9a-f]{64}$/);
      const receipt = await chain.anvil.publicClient.getTransactionReceipt({ hash: result.tx_hash as Hex });
      expect(receipt.from.toLowerCase()).toBe(sender.toLowerCase());
      expect(await isHuman(id, result.address)).toBe(true);
    }
    expect(await sentCount()).toBe(before + addresses.length);

    const second = await pushed(id, addresses);
    expect(second.map((r) => r.status)).toEqual(addresses.map(() => 'skipped'));
    expect(await sentCount()).toBe(before + addresses.length);
  }, 90_000);

  it('reports a refusal of the verifier by its custom error, sending nothing', async () => {
    const { id } = await scorer();
    const address = addressNo(kind === 'sqlite' ? 50 : 150);
    await giveStamps(t.ctx, address, ['Google']);
    const owner = chain.anvil.wallets[0]!;
    const signer = privateKeyToAccount(signerKey).address;
    await chain.anvil.write(owner, chain.deployment.verifier as Address, verifierAbi, 'removeSigner', [signer]);
    try {
      const before = await sentCount();
      const results = await pushed(id, [address]);
      expect(results).toEqual([expect.objectContaining({ address, status: 'failed', reason: 'UnknownSigner', uid: null })]);
      expect(await sentCount()).toBe(before);
    } finally {
      await chain.anvil.write(owner, chain.deployment.verifier as Address, verifierAbi, 'addSigner', [signer]);
    }
  }, 60_000);

  it('reports a transaction that reverts once mined by its custom error, and does not send it again', async () => {
    const { id } = await scorer();
    const address = addressNo(kind === 'sqlite' ? 80 : 180);
    await giveStamps(t.ctx, address, ['Google']);
    const owner = chain.anvil.wallets[0]!;
    const signer = privateKeyToAccount(signerKey).address;
    const before = await sentCount();
    await anvilRpc('evm_setAutomine', [false]);
    try {
      const job = await t.ctx.onchain.push.service.create(31337, id, address);
      await waitFor('the transaction in the pool', 30_000, async () => (await t.ctx.onchain.push.service.job(job.id)).counts.sent === 1, 10);
      // Mined first in the same block (a higher tip): the push's transaction then meets a removed signer.
      await owner.writeContract({ address: chain.deployment.verifier as Address, abi: verifierAbi, functionName: 'removeSigner', args: [signer], maxPriorityFeePerGas: 50_000_000_000n, maxFeePerGas: 100_000_000_000n });
      await anvilRpc('evm_mine');
      await waitFor('the push to finish', 30_000, async () => (await t.ctx.onchain.push.service.job(job.id)).status === 'done', 20);
      const [result] = await t.ctx.onchain.push.service.results(job.id, 0, 10);
      expect(result).toEqual(expect.objectContaining({ address, status: 'failed', reason: 'UnknownSigner', uid: null }));
      const receipt = await chain.anvil.publicClient.getTransactionReceipt({ hash: result!.tx_hash as Hex });
      expect(receipt.status).toBe('reverted');
      expect(await sentCount()).toBe(before + 1);
    } finally {
      await anvilRpc('evm_setAutomine', [true]);
      await chain.anvil.write(owner, chain.deployment.verifier as Address, verifierAbi, 'addSigner', [signer]);
    }
  }, 60_000);

  it('keeps a push pending while the RPC endpoint is down and finishes it once it is back', async () => {
    const { id } = await scorer();
    const addresses = [60, 61, 62, 63, 64, 65, 66, 67].map((n) => addressNo(n + (kind === 'sqlite' ? 0 : 100)));
    for (const address of addresses) await giveStamps(t.ctx, address, ['Google', 'Discord']);
    const job = await t.ctx.onchain.push.service.create(31337, id, addresses.join('\n'));
    await waitFor('the first receipts', 30_000, async () => (await t.ctx.onchain.push.service.job(job.id)).counts.attested >= 2, 5);
    await proxy.cut();
    const atCut = (await t.ctx.onchain.push.service.job(job.id)).counts;
    expect(atCut.attested).toBeLessThan(addresses.length);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const waiting = await t.ctx.onchain.push.service.job(job.id);
    expect(waiting.status).toBe('queued');
    expect(waiting.counts.failed).toBe(0);
    expect(waiting.counts.pending + waiting.counts.sent).toBeGreaterThan(0);
    expect(t.ctx.onchain.push.worker.running).toBe(true);
    await proxy.restore();
    await waitFor('the push to finish', 60_000, async () => (await t.ctx.onchain.push.service.job(job.id)).status === 'done', 50);
    const results = await t.ctx.onchain.push.service.results(job.id, 0, 10);
    expect(results.map((r) => r.status)).toEqual(addresses.map(() => 'attested'));
    for (const address of addresses) expect(await isHuman(id, address)).toBe(true);
    expect(new Set(results.map((r) => r.tx_hash)).size).toBe(addresses.length);
  }, 90_000);

  it('refuses an unknown chain or scorer, a missing sender key and a bad file with exit code 2 and one line, queueing nothing', async () => {
    const { id } = await scorer();
    const dir = join(deploymentFile, '..');
    const goodFile = join(dir, 'good.csv');
    const badFile = join(dir, 'bad.csv');
    writeFileSync(goodFile, `${addressNo(70)}\n`);
    writeFileSync(badFile, `${addressNo(70)}\nnot-an-address\n`);
    const env = {
      STAMPGATE_ENV: 'development',
      DATA_DIR: dir,
      DATABASE_URL: t.test.url,
      ONCHAIN_CONFIG_FILE: deploymentFile,
      ATTESTATION_SIGNER_KEY: signerKey,
      ONCHAIN_SENDER_KEY: senderKey,
    };
    const jobs = async () => Number((await t.ctx.database.db.selectFrom('onchain_push_jobs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await jobs();
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--chain', '999', '--scorer', String(id), '--file', goodFile], {}, /^error: Chain 999 is not deployed here/],
      [['--chain', '31337', '--scorer', '99999', '--file', goodFile], {}, /^error: There is no scorer 99999\.$/],
      [['--chain', '31337', '--scorer', String(id), '--file', goodFile], { ONCHAIN_SENDER_KEY: '' }, /^error: ONCHAIN_SENDER_KEY is not set/],
      [['--chain', '31337', '--scorer', String(id), '--file', badFile], {}, /^error: Line 2 of the CSV body is not an address/],
      [['--chain', '31337', '--scorer', String(id), '--file', join(dir, 'missing.csv')], {}, /^error: cannot read .*missing\.csv \(ENOENT\)$/],
    ];
    for (const [args, extra, message] of cases) {
      const refused = await runCli(['onchain', 'push', ...args], { ...env, ...extra });
      expect(refused.code, refused.err).toBe(2);
      expect(refused.out).toBe('');
      expect(refused.err.split('\n')).toHaveLength(1);
      expect(refused.err).toMatch(message);
    }
    expect(await jobs()).toBe(before);
  }, 60_000);
});
