import { type Abi, type Address, encodeAbiParameters, type Hex, parseEther, zeroHash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSigner, type AdminOptions, removeSigner, setFee } from '../../src/onchain/chain-admin.service.js';
import { schemaUid } from '../../src/onchain/contract-artifacts.js';
import { readDeploymentFile } from '../../src/onchain/deployment-file.js';
import { type DeployedChain, easAbi, resolverAbi, startDeployedChain, temporaryDeploymentFile, verifierAbi } from '../helpers/onchain-chain.js';
import { abiOf, anvilKey, revertName, scoreAndPassportRequest, signRequest } from '../helpers/onchain.js';

const signer = privateKeyToAccount(generatePrivateKey());
const deploymentFile = temporaryDeploymentFile();
let chain: DeployedChain;
let admin: AdminOptions;

beforeAll(async () => {
  chain = await startDeployedChain(10, signer, deploymentFile);
  admin = { config: { onchainConfigFile: deploymentFile, dataDir: '/nonexistent', onchainRpcUrls: {} }, chainId: 10, ownerKey: chain.ownerKey, timeoutMs: 10_000 };
}, 60_000);

afterAll(async () => {
  await chain?.anvil.stop();
});

const verifierAddress = () => chain.deployment.verifier as Address;
const newRecipient = () => privateKeyToAccount(generatePrivateKey()).address;

async function signed(recipient: Address, options: { nonce?: bigint; fee?: bigint; by?: typeof signer; deadlineOffset?: bigint } = {}) {
  const now = await chain.blockTime();
  const request = scoreAndPassportRequest(chain.deployment, recipient, { nonce: options.nonce ?? 0n, now, fee: options.fee ?? 0n });
  if (options.deadlineOffset !== undefined) request.deadline = now + options.deadlineOffset;
  return { request, signature: await signRequest(options.by ?? signer, 10, verifierAddress(), request) };
}

describe('the verifier refuses, each with its custom error', () => {
  it('a request signed by a key it never authorised: UnknownSigner naming the key', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    const { request, signature } = await signed(newRecipient(), { by: stranger });
    expect(await revertName(chain.simulate(request, signature))).toEqual({ name: 'UnknownSigner', args: [stranger.address] });
  });

  it('a signer once authorised and then removed: UnknownSigner (and the file records both times)', async () => {
    const second = privateKeyToAccount(generatePrivateKey());
    const added = await addSigner(admin, second.address);
    expect(added.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const recipient = newRecipient();
    const first = await signed(recipient, { by: second });
    await chain.submit(first.request, first.signature);
    expect(await chain.nonceOf(recipient)).toBe(1n);

    await removeSigner(admin, second.address);
    const entry = (await readDeploymentFile(deploymentFile)).chains[0]!;
    expect(entry.signers).toEqual([
      { address: signer.address, added_at: expect.any(String), removed_at: null },
      { address: second.address, added_at: added.signers[1]!.added_at, removed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    ]);
    const later = await signed(recipient, { by: second, nonce: 1n });
    expect(await revertName(chain.simulate(later.request, later.signature))).toEqual({ name: 'UnknownSigner', args: [second.address] });
    expect(await chain.nonceOf(recipient)).toBe(1n);
  });

  it('a replayed request, and a nonce ahead of the recipient\'s: InvalidNonce(expected, given)', async () => {
    const recipient = newRecipient();
    const { request, signature } = await signed(recipient);
    await chain.submit(request, signature);
    expect(await revertName(chain.simulate(request, signature))).toEqual({ name: 'InvalidNonce', args: [1n, 0n] });
    const ahead = await signed(recipient, { nonce: 5n });
    expect(await revertName(chain.simulate(ahead.request, ahead.signature))).toEqual({ name: 'InvalidNonce', args: [1n, 5n] });
  });

  it('a request past its deadline: Expired', async () => {
    const { request, signature } = await signed(newRecipient(), { deadlineOffset: -1n });
    expect((await revertName(chain.simulate(request, signature))).name).toBe('Expired');
  });

  it('a fee other than the verifier\'s, or a payment other than the request\'s: WrongFee; the right fee is collected and withdrawn', async () => {
    await setFee(admin, 1000n);
    const recipient = newRecipient();
    const unpaid = await signed(recipient, { fee: 0n });
    expect(await revertName(chain.simulate(unpaid.request, unpaid.signature))).toEqual({ name: 'WrongFee', args: [1000n, 0n, 0n] });
    const paid = await signed(recipient, { fee: 1000n });
    expect(await revertName(chain.simulate(paid.request, paid.signature, { value: 999n }))).toEqual({ name: 'WrongFee', args: [1000n, 1000n, 999n] });
    await chain.submit(paid.request, paid.signature);
    expect(await chain.anvil.publicClient.getBalance({ address: verifierAddress() })).toBe(1000n);

    const to = newRecipient();
    await chain.anvil.write(chain.anvil.wallets[0]!, verifierAddress(), verifierAbi, 'withdrawFees', [to]);
    expect(await chain.anvil.publicClient.getBalance({ address: to })).toBe(1000n);
    await setFee(admin, 0n);
    const free = await signed(recipient, { nonce: 1n });
    await chain.submit(free.request, free.signature);
    expect(await chain.nonceOf(recipient)).toBe(2n);
  });

  it('a request changed after signing (data, recipient, expiry): UnknownSigner of some other key', async () => {
    const recipient = newRecipient();
    const { request, signature } = await signed(recipient);
    const tampered = [
      { ...request, attestations: [{ ...request.attestations[0]!, data: `${request.attestations[0]!.data.slice(0, -2)}01` as Hex }, request.attestations[1]!] },
      { ...request, recipient: newRecipient() },
      { ...request, attestations: [{ ...request.attestations[0]!, expirationTime: request.attestations[0]!.expirationTime + 1n }, request.attestations[1]!] },
      { ...request, deadline: request.deadline + 1n },
    ];
    for (const changed of tampered) {
      const refusal = await revertName(chain.simulate(changed, signature));
      expect(refusal.name).toBe('UnknownSigner');
      expect(refusal.args[0]).not.toBe(signer.address);
    }
    await chain.submit(request, signature);
  });

  it('a malformed signature: InvalidSignature; a request of no attestations: NoAttestations', async () => {
    const { request, signature } = await signed(newRecipient());
    expect((await revertName(chain.simulate(request, { ...signature, r: zeroHash }))).name).toBe('InvalidSignature');
    const empty = { ...request, attestations: [] };
    expect((await revertName(chain.simulate(empty, await signRequest(signer, 10, verifierAddress(), empty)))).name).toBe('NoAttestations');
  });

  it('only the owner administers it', async () => {
    await expect(addSigner({ ...admin, ownerKey: anvilKey(1) }, newRecipient())).rejects.toThrow(/is owned by/);
    const direct = chain.anvil.publicClient.simulateContract({
      address: verifierAddress(), abi: verifierAbi, functionName: 'setFee', args: [parseEther('1')], account: chain.anvil.wallets[1]!.account,
    });
    expect((await revertName(direct)).name).toBe('OwnableUnauthorizedAccount');
  });
});

describe('the resolver refuses', () => {
  const easWithResolverErrors = [...easAbi, ...resolverAbi.filter((item) => item.type === 'error')] as Abi;

  it('an attester other than the verifier attesting our schema directly on EAS: NotVerifier', async () => {
    const attacker = chain.anvil.wallets[3]!;
    const { request } = await signed(attacker.account.address);
    const direct = chain.anvil.publicClient.simulateContract({
      address: chain.deployment.eas as Address,
      abi: easWithResolverErrors,
      functionName: 'attest',
      args: [{ schema: chain.deployment.score_schema_uid, data: { recipient: attacker.account.address, expirationTime: 0n, revocable: true, refUID: zeroHash, data: request.attestations[0]!.data, value: 0n } }],
      account: attacker.account,
    });
    expect(await revertName(direct)).toEqual({ name: 'NotVerifier', args: [attacker.account.address] });
  });

  it('a schema someone else registered with it, even through the verifier: UnknownSchema', async () => {
    const registryAbi = abiOf('SchemaRegistry');
    const registry = chain.deployment.schema_registry as Address;
    await chain.anvil.write(chain.anvil.wallets[3]!, registry, registryAbi, 'register', ['uint256 anything', chain.deployment.resolver, true]);
    const foreign = schemaUid('uint256 anything', chain.deployment.resolver as Hex);
    const now = await chain.blockTime();
    const request = {
      recipient: newRecipient(),
      attestations: [{ schema: foreign, expirationTime: 0n, data: encodeAbiParameters([{ type: 'uint256' }], [1n]) }],
      nonce: 0n,
      deadline: now + 600n,
      fee: 0n,
    };
    const signature = await signRequest(signer, 10, verifierAddress(), request);
    const call = chain.anvil.publicClient.simulateContract({
      address: verifierAddress(), abi: [...verifierAbi, ...resolverAbi.filter((i) => i.type === 'error')] as Abi, functionName: 'verifyAndAttest',
      args: [request, signature.v, signature.r, signature.s], account: chain.anvil.wallets[2]!.account,
    });
    expect(await revertName(call)).toEqual({ name: 'UnknownSchema', args: [foreign] });
  });
});
