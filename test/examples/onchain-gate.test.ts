/**
 * The gating example (examples/onchain-gate/HumanGatedClaim.sol) as an integrator runs it: the
 * wallet asks Stampgate for a signed attestation request, submits it to the real verifier itself,
 * and the example contract then lets it claim because the decoder says `isHuman` — the contract
 * never talks to Stampgate. Real contracts on anvil, the real service on both databases.
 */
import { type Address, getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { type DeployedChain, startDeployedChain, temporaryDeploymentFile } from '../helpers/onchain-chain.js';
import { compileSolidityFile } from '../helpers/onchain-deployments.js';
import { revertName } from '../helpers/onchain.js';
import { giveStamps } from '../helpers/stamps.js';

const gate = compileSolidityFile(new URL('../../examples/onchain-gate/HumanGatedClaim.sol', import.meta.url)).HumanGatedClaim!;

interface ServedRequest {
  request: { recipient: Address; attestations: { schema: Hex; expirationTime: string; data: Hex }[]; nonce: string; deadline: string; fee: string };
  signature: { v: number; r: Hex; s: Hex };
}

describe.each(databaseKinds)('an isHuman-gated claim on %s', (kind) => {
  const signerKey = generatePrivateKey();
  const deploymentFile = temporaryDeploymentFile();
  let chain: DeployedChain;
  let t: TestApp;

  beforeAll(async () => {
    chain = await startDeployedChain(31337, privateKeyToAccount(signerKey), deploymentFile);
  }, 60_000);
  afterAll(async () => chain?.anvil.stop());
  afterEach(async () => t?.close());

  it('refuses a wallet without an onchain score and lets it claim once its passing score is attested', async () => {
    t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: deploymentFile, ATTESTATION_SIGNER_KEY: signerKey });
    const account = await t.ctx.accounts.createAccount('airdrop');
    const scorer = await t.ctx.accounts.createScorer(account.id, { name: 'airdrop', threshold: '20', weights: { Google: '15', Discord: '10' } });
    const key = (await t.ctx.apiKeys.create(account.id)).key;

    const claimant = chain.anvil.wallets[1]!;
    const claimer = claimant.account.address;
    await giveStamps(t.ctx, claimer.toLowerCase(), ['Google', 'Discord']);
    const deployer = chain.anvil.wallets[0]!;
    const { address: gateAddress } = await chain.anvil.deploy(deployer, gate, [chain.deployment.decoder, BigInt(scorer.id)]);
    const claim = () => chain.anvil.publicClient.simulateContract({ account: claimant.account, address: gateAddress, abi: gate.abi, functionName: 'claim' });

    expect(await revertName(claim())).toEqual({ name: 'NotHuman', args: [getAddress(claimer)] });

    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/onchain/31337/attestations',
      headers: { 'x-api-key': key },
      payload: { address: claimer.toLowerCase(), scorer_id: scorer.id },
    });
    expect(res.statusCode).toBe(200);
    const served = res.json() as ServedRequest;
    const request = {
      recipient: served.request.recipient,
      attestations: served.request.attestations.map((a) => ({ schema: a.schema, expirationTime: BigInt(a.expirationTime), data: a.data })),
      nonce: BigInt(served.request.nonce),
      deadline: BigInt(served.request.deadline),
      fee: BigInt(served.request.fee),
    };
    // Anyone may submit the signed request; here another funded account pays the gas.
    await chain.submit(request, served.signature);

    await chain.anvil.write(claimant, gateAddress, gate.abi, 'claim', []);
    expect(await chain.anvil.publicClient.readContract({ address: gateAddress, abi: gate.abi, functionName: 'claimed', args: [claimer] })).toBe(true);
    expect(await revertName(claim())).toEqual({ name: 'AlreadyClaimed', args: [getAddress(claimer)] });
  }, 60_000);
});
