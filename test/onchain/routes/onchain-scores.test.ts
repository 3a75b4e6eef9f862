/**
 * `GET /v2/onchain/scores/{scorer_id}/{address}` against two real chains (anvil, ids 31337 and
 * 31338) with Stampgate's contracts deployed: an address attested on one through the real verifier
 * (the service's own signed request, submitted by another funded account), the other chain empty;
 * then one chain's endpoint hanging, answering garbage, without a URL, and stopped.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Address, getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { type DeployedChain, startDeployedChain, temporaryDeploymentFile } from '../../helpers/onchain-chain.js';
import { startRpcProbe } from '../../helpers/rpc-probe.js';
import { giveStamps, testWallet } from '../../helpers/stamps.js';
import { portalSignIn } from '../../portal/portal-helpers.js';

const owner = testWallet(5201);
const alice = testWallet(5202);
const bob = testWallet(5203);

interface ServedRequest {
  request: { recipient: Address; attestations: { schema: Hex; expirationTime: string; data: Hex }[]; nonce: string; deadline: string; fee: string };
  signature: { v: number; r: Hex; s: Hex };
}

describe.each(databaseKinds)('GET /v2/onchain/scores/{scorer_id}/{address} on %s', (kind) => {
  const signerKey = generatePrivateKey();
  const deploymentFile = temporaryDeploymentFile();
  let attested: DeployedChain;
  let empty: DeployedChain;
  let t: TestApp;
  let key: string;
  let scorerId: number;
  let cookie: string;
  /** Alice's attestation on chain 31337: its onchain time and expiry. */
  let attestedAt: bigint;
  let attestedUntil: string;
  let attestedScorer: number | undefined;

  async function start(env: Record<string, string> = {}) {
    t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: deploymentFile, ATTESTATION_SIGNER_KEY: signerKey, ...env });
    const login = await portalSignIn(t.app, owner);
    cookie = login.cookie;
    scorerId = (await t.ctx.accounts.createScorer(login.accountId, { name: 'onchain', weights: { Google: '12.3456789', Discord: '8' } })).id;
    key = (await t.ctx.apiKeys.create(login.accountId)).key;
    // Every app has a fresh database, so its first scorer has the id the attestation was made for.
    attestedScorer ??= scorerId;
    expect(scorerId).toBe(attestedScorer);
  }
  const read = (address: string, headers: Record<string, string> = { 'x-api-key': key }, scorer: number | string = scorerId) =>
    t.app.inject({ method: 'GET', url: `/v2/onchain/scores/${scorer}/${address}`, headers });
  const eventCount = async () => Number((await t.ctx.database.db.selectFrom('score_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    const signer = privateKeyToAccount(signerKey);
    attested = await startDeployedChain(31337, signer, deploymentFile);
    empty = await startDeployedChain(31338, signer, deploymentFile);
    // Alice's score reaches chain 31337 the way a wallet puts it there: the service signs, anyone submits.
    await start();
    await giveStamps(t.ctx, alice.address, ['Google', 'Discord']);
    const res = await t.app.inject({ method: 'POST', url: '/v2/onchain/31337/attestations', headers: { 'x-api-key': key }, payload: { address: alice.address, scorer_id: scorerId } });
    expect(res.statusCode, res.body).toBe(200);
    const served = res.json() as ServedRequest;
    const hash = await attested.submit(
      {
        recipient: served.request.recipient,
        attestations: served.request.attestations.map((a) => ({ schema: a.schema, expirationTime: BigInt(a.expirationTime), data: a.data })),
        nonce: BigInt(served.request.nonce),
        deadline: BigInt(served.request.deadline),
        fee: BigInt(served.request.fee),
      },
      served.signature,
    );
    const receipt = await attested.anvil.publicClient.getTransactionReceipt({ hash });
    attestedAt = (await attested.anvil.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp;
    attestedUntil = served.request.attestations[0]!.expirationTime;
    await t.close();
    t = undefined as never;
  }, 120_000);
  afterAll(async () => {
    await attested?.anvil.stop();
    await empty?.anvil.stop();
    rmSync(dirname(deploymentFile), { recursive: true, force: true });
  });
  afterEach(async () => {
    await t?.close();
    t = undefined as never;
  });

  const aliceOnChain = () => ({
    chain_id: 31337,
    decoder: getAddress(attested.deployment.decoder),
    attested: true,
    // The stored score is 20.34568; the chain holds it in units of 10^-4, truncated.
    score: '20.34560',
    passing: true,
    time: attestedAt.toString(),
    expiration_time: attestedUntil,
  });
  const notAttested = (chain: DeployedChain, chainId: number) => ({
    chain_id: chainId,
    decoder: getAddress(chain.deployment.decoder),
    attested: false,
    score: '0.00000',
    passing: false,
    time: '0',
    expiration_time: '0',
  });

  it('answers each chain\'s decoder, with the API key or the portal cookie (no CSRF token: it changes nothing), recording nothing', async () => {
    await start();
    await giveStamps(t.ctx, alice.address, ['Google', 'Discord']);
    const before = await eventCount();
    for (const headers of [{ 'x-api-key': key }, { cookie }] as Record<string, string>[]) {
      const res = await read(alice.address.toUpperCase().replace('0X', '0x'), headers);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ address: alice.address, scorer_id: String(scorerId), chains: [aliceOnChain(), notAttested(empty, 31338)] });
    }
    // An address attested nowhere, and another scorer of the same account: zeros on both chains.
    const nobody = await read(bob.address, { cookie });
    expect(nobody.json().chains).toEqual([notAttested(attested, 31337), notAttested(empty, 31338)]);
    const other = await t.ctx.accounts.createScorer((await t.ctx.accounts.accountOfOwner(owner.address))!.id, { name: 'other' });
    expect((await read(alice.address, { cookie }, other.id)).json().chains).toEqual([notAttested(attested, 31337), notAttested(empty, 31338)]);
    expect(await eventCount()).toBe(before);
    expect(await t.ctx.v2.events.scoreAt(t.ctx.database.db, scorerId, alice.address, Date.now() + 86_400_000)).toBeUndefined();
  });

  it('refuses bad input and others\' scorers with the standard error body; no chain deployed is no entry, an invalid file 503', async () => {
    await start();
    const bad = await read('0x1234');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_address');
    expect((await read(alice.address, { 'x-api-key': key }, 'one')).statusCode).toBe(400);
    const other = await seedAccount(t.ctx);
    const foreign = await read(alice.address, { 'x-api-key': key }, other.scorer.id);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ code: 'scorer_not_found', detail: expect.any(String) });
    expect((await read(alice.address, { 'x-api-key': key }, 0)).statusCode).toBe(404);
    const writer = (await t.ctx.apiKeys.create(other.account.id, { permissions: ['submit_passports'] })).key;
    expect((await read(alice.address, { 'x-api-key': writer }, other.scorer.id)).statusCode).toBe(403);
    expect((await read(alice.address, {})).statusCode).toBe(401);
    await t.close();
    const elsewhere = (name: string) => join(dirname(deploymentFile), name);
    writeFileSync(elsewhere('empty.json'), JSON.stringify({ chains: [] }));
    writeFileSync(elsewhere('invalid.json'), '{"chains": [{"chain_id": "ten"}]}');
    for (const file of ['missing.json', 'empty.json']) {
      await start({ ONCHAIN_CONFIG_FILE: elsewhere(file) });
      const none = await read(alice.address);
      expect(none.statusCode, file).toBe(200);
      expect(none.json()).toEqual({ address: alice.address, scorer_id: String(scorerId), chains: [] });
      // Still the account's scorers only.
      const stranger = await seedAccount(t.ctx);
      expect((await read(alice.address, { 'x-api-key': key }, stranger.scorer.id)).statusCode).toBe(404);
      await t.close();
    }
    await start({ ONCHAIN_CONFIG_FILE: elsewhere('invalid.json') });
    const invalid = await read(alice.address);
    expect(invalid.statusCode).toBe(503);
    expect(invalid.json()).toEqual({ code: 'onchain_not_configured', detail: expect.stringContaining('not valid') });
  }, 60_000);

  it('one chain hanging, answering garbage or without an RPC URL: its entry is the error, the other chain still answers', async () => {
    const hanging = await startRpcProbe(empty.anvil.url, 'hang');
    const garbage = await startRpcProbe(empty.anvil.url, 'rpc-error');
    const noUrl = join(dirname(deploymentFile), 'no-url.json');
    const file = JSON.parse(readFileSync(deploymentFile, 'utf8')) as { chains: { chain_id: number; rpc_url?: string }[] };
    for (const chain of file.chains) if (chain.chain_id === 31338) delete chain.rpc_url;
    writeFileSync(noUrl, JSON.stringify(file));
    try {
      const cases: [Record<string, string>, string, RegExp][] = [
        [{ ONCHAIN_RPC_URL_31338: hanging.url }, 'upstream_unavailable', /timed out/],
        [{ ONCHAIN_RPC_URL_31338: garbage.url }, 'upstream_unavailable', /127\.0\.0\.1/],
        [{ ONCHAIN_CONFIG_FILE: noUrl }, 'onchain_not_configured', /ONCHAIN_RPC_URL_31338/],
      ];
      for (const [env, code, detail] of cases) {
        await start({ OUTBOUND_TIMEOUT_MS: '400', ...env });
        const began = Date.now();
        const res = await read(alice.address);
        // A hang is cut at the timeout: the answer comes, well before a test's own limit.
        expect(Date.now() - began).toBeLessThan(10_000);
        expect(res.statusCode, res.body).toBe(200);
        const [one, two] = res.json().chains;
        expect(one).toEqual(aliceOnChain());
        expect(two).toEqual({ chain_id: 31338, decoder: getAddress(empty.deployment.decoder), error: { code, detail: expect.stringMatching(detail) } });
        await t.close();
        t = undefined as never;
      }
    } finally {
      await hanging.close();
      await garbage.close();
    }
  }, 60_000);

  it('the empty chain\'s node stopped: its entry is upstream_unavailable, the attested chain still answers', async () => {
    await empty.anvil.stop();
    await start({ OUTBOUND_TIMEOUT_MS: '400' });
    const res = await read(alice.address, { cookie });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().chains).toEqual([
      aliceOnChain(),
      { chain_id: 31338, decoder: getAddress(empty.deployment.decoder), error: { code: 'upstream_unavailable', detail: expect.stringContaining('could not be reached') } },
    ]);
  });
});
