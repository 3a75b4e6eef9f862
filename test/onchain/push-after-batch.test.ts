/**
 * The push as a batch option (`stampgate batches run … --onchain-push CHAIN`), on both databases,
 * against real contracts on anvil: the batch scores, then its addresses are attested with the
 * scores the batch recorded; a push waiting for a batch sends nothing while it runs and nothing
 * once it is cancelled; the option's refusals queue nothing; and an API process tells, in its
 * readiness answer, that a push waits with no worker holding its sender key.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Address, getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/scoring/batches/batches.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { decoderAbi, type DeployedChain, startDeployedChain, temporaryDeploymentFile } from '../helpers/onchain-chain.js';
import { runCli } from '../helpers/cli.js';
import { anvilKey } from '../helpers/onchain.js';
import { waitFor } from '../helpers/processes.js';
import { giveStamps } from '../helpers/stamps.js';

const addressNo = (n: number) => `0x${(0xba7c0000 + n).toString(16).padStart(40, '0')}`;

describe.each(databaseKinds)('a push after a batch on %s', (kind) => {
  const signerKey = generatePrivateKey();
  const deploymentFile = temporaryDeploymentFile();
  const dir = join(deploymentFile, '..');
  const senderKey = anvilKey(kind === 'sqlite' ? 6 : 7);
  const sender = privateKeyToAccount(senderKey).address;
  let chain: DeployedChain;
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    chain = await startDeployedChain(31337, privateKeyToAccount(signerKey), deploymentFile);
    const onchainEnv = { ONCHAIN_CONFIG_FILE: deploymentFile, ATTESTATION_SIGNER_KEY: signerKey, ONCHAIN_SENDER_KEY: senderKey, ONCHAIN_RPC_URL_31337: chain.anvil.url };
    // A short lease: the readiness case waits for one (plus the push worker's one-second poll).
    t = await createTestApp(kind, { ...onchainEnv, ONCHAIN_PUSH_LEASE_MS: '1000' });
    env = { STAMPGATE_ENV: 'development', DATA_DIR: t.ctx.config.dataDir, DATABASE_URL: t.test.url, ...onchainEnv };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await chain?.anvil.stop();
  });

  async function scorer() {
    const account = await t.ctx.accounts.createAccount(`batch push ${Math.random()}`);
    return t.ctx.accounts.createScorer(account.id, { name: 'batch push', threshold: '20', weights: { Google: '15', Discord: '10' } });
  }
  const sentCount = () => chain.anvil.publicClient.getTransactionCount({ address: sender });
  const count = async (table: 'batches' | 'onchain_push_jobs') =>
    Number((await t.ctx.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const scoreEvents = async (address: string) =>
    t.ctx.database.db.selectFrom('score_events').select('id').where('address', '=', address).orderBy('id').execute();

  it('scores the batch, writes its results, then attests each address with the score event the batch recorded', async () => {
    const { id } = await scorer();
    const addresses = [0, 1, 2, 3].map((n) => addressNo(n + (kind === 'sqlite' ? 0 : 100)));
    for (const address of addresses) await giveStamps(t.ctx, address, ['Google', 'Discord']);
    const file = join(dir, `batch-${kind}.csv`);
    const out = join(dir, `results-${kind}.ndjson`);
    writeFileSync(file, `address\n${addresses.join('\n')}\n${addresses[0]}\n`);
    const before = await sentCount();

    const run = await runCli(['batches', 'run', file, '--scorer', String(id), '--out', out, '--onchain-push', '31337'], env);
    expect(run.code, run.err).toBe(0);
    const results = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { address: string; passing_score: boolean });
    expect(results.map((r) => [r.address, r.passing_score])).toEqual([...addresses, addresses[0]].map((a) => [a, true]));
    const lines = run.out.split('\n');
    expect(lines).toHaveLength(addresses.length);
    lines.forEach((line, i) => expect(line).toMatch(new RegExp(`^${addresses[i]} attested 0x[0-9a-f]{64} 0x[0-9a-f]{64}$`)));
    expect(run.err).toMatch(/Queued push push_[0-9a-f]+: 4 address\(es\) to chain 31337 once batch bat_/);
    expect(await sentCount()).toBe(before + addresses.length);

    const job = await t.ctx.database.db.selectFrom('onchain_push_jobs').select(['id', 'after_batch_id']).where('scorer_id', '=', id).executeTakeFirstOrThrow();
    expect(job.after_batch_id).toMatch(/^bat_/);
    for (const address of addresses) {
      // The push scored the address again and found the batch's score unchanged: one event, the one attested.
      const events = await scoreEvents(address);
      expect(events).toHaveLength(1);
      const item = await t.ctx.database.db.selectFrom('onchain_push_items').select('score_event_id').where('job_id', '=', job.id).where('address', '=', address).executeTakeFirstOrThrow();
      expect(Number(item.score_event_id)).toBe(Number(events[0]!.id));
      const human = await chain.anvil.publicClient.readContract({ address: chain.deployment.decoder as Address, abi: decoderAbi, functionName: 'isHuman', args: [BigInt(id), getAddress(address)] });
      expect(human).toBe(true);
    }
  }, 120_000);

  it('sends nothing while its batch runs, and fails every address without a transaction once the batch is cancelled', async () => {
    const { id } = await scorer();
    const addresses = [10, 11, 12].map((n) => addressNo(n + (kind === 'sqlite' ? 0 : 100)));
    for (const address of addresses) await giveStamps(t.ctx, address, ['Google']);
    const { batch } = await t.ctx.batches.service.createAsOperator(id, { addresses });
    const job = await t.ctx.onchain.push.service.createAfterBatch(31337, id, batch.id, addresses);
    const before = await sentCount();
    t.ctx.onchain.push.worker.start();
    try {
      // No batch worker runs here: the batch stays PENDING, and the push waits through several polls.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const waiting = await t.ctx.onchain.push.service.job(job.id);
      expect(waiting).toMatchObject({ status: 'queued', after_batch_id: batch.id, counts: { pending: 3, sent: 0, attested: 0, failed: 0 } });
      expect(await sentCount()).toBe(before);

      await t.ctx.batches.service.cancel(operator, batch.id);
      await waitFor('the push to end', 20_000, async () => (await t.ctx.onchain.push.service.job(job.id)).status === 'done', 50);
      const results = await t.ctx.onchain.push.service.results(job.id, 0, 10);
      expect(results.map((r) => [r.address, r.status, r.reason])).toEqual(addresses.map((a) => [a, 'failed', `batch ${batch.id} was cancelled`]));
      expect(await sentCount()).toBe(before);
    } finally {
      await t.ctx.onchain.push.worker.stop();
    }
  }, 60_000);

  it('refuses --onchain-push without --out, or with a chain that is not deployed, with exit code 2 and nothing queued', async () => {
    const { id } = await scorer();
    const file = join(dir, `refused-${kind}.csv`);
    writeFileSync(file, `${addressNo(20)}\n`);
    const batches = await count('batches');
    const jobs = await count('onchain_push_jobs');
    const noOut = await runCli(['batches', 'run', file, '--scorer', String(id), '--onchain-push', '31337'], env);
    expect(noOut.code).toBe(2);
    expect(noOut.err).toBe("error: --onchain-push needs --out: the standard output carries the push's lines");
    const unknown = await runCli(['batches', 'run', file, '--scorer', String(id), '--out', join(dir, 'x.ndjson'), '--onchain-push', '999'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^error: Chain 999 is not deployed here/);
    const noKey = await runCli(['batches', 'run', file, '--scorer', String(id), '--out', join(dir, 'x.ndjson'), '--onchain-push', '31337'], { ...env, ONCHAIN_SENDER_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/^error: ONCHAIN_SENDER_KEY is not set/);
    expect(await count('batches')).toBe(batches);
    expect(await count('onchain_push_jobs')).toBe(jobs);
  }, 60_000);

  it('warns in /health/ready while a push waits with no worker holding its sender key, and stops once one is seen', async () => {
    const { id } = await scorer();
    const address = addressNo(kind === 'sqlite' ? 30 : 130);
    const { batch } = await t.ctx.batches.service.createAsOperator(id, { addresses: [address] });
    const job = await t.ctx.onchain.push.service.createAfterBatch(31337, id, batch.id, [address]);
    const watch = t.ctx.onchain.push.watch!;
    watch.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, watch.thresholdMs + 2000));
      await watch.check();
      const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json().warnings).toEqual([{ code: 'no_push_worker', detail: expect.stringMatching(/^No push worker seen for \d+ s while \d+ push job\(s\) wait: nothing is sent until a worker runs with the same ONCHAIN_SENDER_KEY/) }]);

      t.ctx.onchain.push.worker.start();
      await waitFor('the worker to be seen', 10_000, async () => (await t.ctx.onchain.push.service.workerLastSeen()) !== null, 20);
      await watch.check();
      expect((await t.app.inject({ method: 'GET', url: '/health/ready' })).json()).toEqual({ status: 'ok' });
    } finally {
      watch.stop();
      await t.ctx.batches.service.cancel(operator, batch.id);
      await waitFor('the push to end', 20_000, async () => (await t.ctx.onchain.push.service.job(job.id)).status === 'done', 50);
      await t.ctx.onchain.push.worker.stop();
    }
  }, 60_000);
});
