import { readFileSync } from 'node:fs';
import { type Address, encodeFunctionData, getAddress, type Hex, hashTypedData, parseEventLogs } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaUid } from '../../src/onchain/contract-artifacts.js';
import { connectChain } from '../../src/onchain/chain-connection.js';
import { readDecoder } from '../../src/onchain/decoder-reader.js';
import { deployOnchain } from '../../src/onchain/deploy.service.js';
import { readDeploymentFile } from '../../src/onchain/deployment-file.js';
import { decoderAbi, type DeployedChain, easAbi, startDeployedChain, temporaryDeploymentFile, verifierAbi } from '../helpers/onchain-chain.js';
import { easSdk, revertName, schemaStrings, scoreAndPassportRequest, signRequest, toHexSafe } from '../helpers/onchain.js';

const signer = privateKeyToAccount(generatePrivateKey());
const deploymentFile = temporaryDeploymentFile();
let optimism: DeployedChain;
let sepolia: DeployedChain;

beforeAll(async () => {
  [optimism, sepolia] = await Promise.all([startDeployedChain(10, signer, deploymentFile), startDeployedChain(11155420, signer, deploymentFile)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([optimism?.anvil.stop(), sepolia?.anvil.stop()]);
});

describe('onchain deploy on two chains at once', () => {
  it('records both chains in the deployment file, with checksummed addresses, the schemas and their UIDs, and the signer', async () => {
    const file = await readDeploymentFile(deploymentFile);
    expect(file.chains.map((c) => c.chain_id)).toEqual([10, 11155420]);
    for (const [chain, deployed] of [[10, optimism], [11155420, sepolia]] as const) {
      const entry = file.chains.find((c) => c.chain_id === chain)!;
      expect(entry).toEqual(expect.objectContaining({ eas: deployed.deployment.eas, verifier: deployed.deployment.verifier, rpc_url: deployed.anvil.url }));
      for (const key of ['eas', 'schema_registry', 'verifier', 'resolver', 'decoder'] as const) expect(entry[key]).toBe(getAddress(entry[key]));
      expect(entry.score_schema).toBe(schemaStrings.score);
      expect(entry.passport_schema).toBe(schemaStrings.passport);
      expect(entry.score_schema_uid).toBe(schemaUid(schemaStrings.score, entry.resolver as Hex));
      expect(entry.passport_schema_uid).toBe(schemaUid(schemaStrings.passport, entry.resolver as Hex));
      expect(entry.eas_version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(entry.signers).toEqual([{ address: signer.address, added_at: expect.any(String), removed_at: null }]);
      expect(deployed.deployment.signer).toBe(signer.address);
    }
  });

  it('registers both schemas with the resolver on EAS\'s registry', async () => {
    const registryAbi = JSON.parse(readFileSync(new URL('../../contracts/abi/SchemaRegistry.json', import.meta.url), 'utf8')).abi;
    for (const kind of ['score', 'passport'] as const) {
      const record = (await optimism.anvil.publicClient.readContract({
        address: optimism.deployment.schema_registry as Address,
        abi: registryAbi,
        functionName: 'getSchema',
        args: [optimism.deployment[`${kind}_schema_uid`]],
      })) as { uid: Hex; resolver: Address; revocable: boolean; schema: string };
      expect(record).toEqual({ uid: optimism.deployment[`${kind}_schema_uid`], resolver: optimism.deployment.resolver, revocable: true, schema: schemaStrings[kind] });
    }
  });
});

describe('a signed request attested and read back', () => {
  const recipient = privateKeyToAccount(generatePrivateKey()).address;

  it('hashes the request exactly as EIP-712 does with the committed types', async () => {
    const now = await optimism.blockTime();
    const request = scoreAndPassportRequest(optimism.deployment, recipient, { nonce: 0n, now });
    const eip712 = JSON.parse(readFileSync(new URL('../../contracts/abi/verifier-eip712.json', import.meta.url), 'utf8'));
    const expected = hashTypedData({
      domain: { ...eip712.domain, chainId: 10, verifyingContract: optimism.deployment.verifier as Address },
      types: eip712.types,
      primaryType: 'AttestationRequest',
      message: request as never,
    });
    const onchain = await optimism.anvil.publicClient.readContract({
      address: optimism.deployment.verifier as Address,
      abi: verifierAbi,
      functionName: 'hashRequest',
      args: [request],
    });
    expect(onchain).toBe(expected);
  });

  it('attests score and passport, and the decoder answers what was attested', async () => {
    const now = await optimism.blockTime();
    const expired = { provider: 'Discord', hash: toHexSafe(3n), issuance_date: now - 100n * 86_400n, expiration_date: now - 86_400n };
    const request = scoreAndPassportRequest(optimism.deployment, recipient, { nonce: 0n, now });
    const stamps = [
      { provider: 'Google', hash: toHexSafe(1n), issuance_date: now - 86_400n, expiration_date: now + 30n * 86_400n },
      expired,
      { provider: 'Github', hash: toHexSafe(2n), issuance_date: now - 86_400n, expiration_date: now + 60n * 86_400n },
    ];
    const withExpired = scoreAndPassportRequest(optimism.deployment, recipient, { nonce: 0n, now, stamps });
    expect(withExpired.attestations[1]!.data).not.toBe(request.attestations[1]!.data);
    const signature = await signRequest(signer, 10, optimism.deployment.verifier as Address, withExpired);

    const hash = await optimism.submit(withExpired, signature);
    const receipt = await optimism.anvil.publicClient.getTransactionReceipt({ hash });
    const attested = parseEventLogs({ abi: easAbi, logs: receipt.logs, eventName: 'Attested' }) as unknown as { args: { recipient: Address; attester: Address; uid: Hex; schemaUID: Hex } }[];
    expect(attested.map((e) => [e.args.recipient, e.args.attester, e.args.schemaUID])).toEqual([
      [recipient, optimism.deployment.verifier, optimism.deployment.score_schema_uid],
      [recipient, optimism.deployment.verifier, optimism.deployment.passport_schema_uid],
    ]);
    expect(await optimism.nonceOf(recipient)).toBe(1n);

    const client = optimism.anvil.publicClient;
    const decoder = optimism.deployment.decoder as Address;
    const [score, passing, time, expirationTime] = (await client.readContract({ address: decoder, abi: decoderAbi, functionName: 'getScore', args: [7n, recipient] })) as [bigint, boolean, bigint, bigint];
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    expect({ score, passing, time, expirationTime }).toEqual({ score: 215_000n, passing: true, time: block.timestamp, expirationTime: now + 90n * 86_400n });
    expect(await client.readContract({ address: decoder, abi: decoderAbi, functionName: 'isHuman', args: [7n, recipient] })).toBe(true);
    expect(await client.readContract({ address: decoder, abi: decoderAbi, functionName: 'getScore', args: [8n, recipient] })).toEqual([0n, false, 0n, 0n]);
    expect(await client.readContract({ address: decoder, abi: decoderAbi, functionName: 'isHuman', args: [8n, recipient] })).toBe(false);
    const passport = (await client.readContract({ address: decoder, abi: decoderAbi, functionName: 'getPassport', args: [recipient] })) as unknown[];
    expect(passport).toEqual([
      { provider: 'Google', hash: toHexSafe(1n), issuanceDate: now - 86_400n, expirationDate: now + 30n * 86_400n },
      { provider: 'Github', hash: toHexSafe(2n), issuanceDate: now - 86_400n, expirationDate: now + 60n * 86_400n },
    ]);

    // A score read is cheap enough for a contract to gate on: under 50,000 gas beyond the intrinsic 21,000.
    const getScoreGas = await client.estimateGas({ to: decoder, data: encodeFunctionData({ abi: decoderAbi, functionName: 'getScore', args: [7n, recipient] }) });
    expect(getScoreGas - 21_000n).toBeLessThan(50_000n);

    // The library reader, as `onchain read` uses it: JSON-ready, big integers as text.
    const read = await readDecoder(await connectChain(optimism.anvil.url, { timeoutMs: 5000 }), decoder, recipient, 7n);
    expect(read).toEqual({
      chain_id: 10,
      decoder,
      address: recipient,
      score: { scorer_id: '7', score: '215000', score_decimals: 4, passing: true, is_human: true, time: String(block.timestamp), expiration_time: String(now + 90n * 86_400n) },
      passport: [
        { provider: 'Google', hash: toHexSafe(1n), issuance_date: String(now - 86_400n), expiration_date: String(now + 30n * 86_400n) },
        { provider: 'Github', hash: toHexSafe(2n), issuance_date: String(now - 86_400n), expiration_date: String(now + 60n * 86_400n) },
      ],
    });

    // eas-sdk, an independent decoder of the schema, reads the attested data back.
    const uid = attested[0]!.args.uid;
    const attestation = (await client.readContract({ address: optimism.deployment.eas as Address, abi: easAbi, functionName: 'getAttestation', args: [uid] })) as { data: Hex; revocable: boolean; attester: Address };
    expect(attestation.revocable).toBe(true);
    const decoded = new (easSdk().SchemaEncoder)(schemaStrings.score).decodeData(attestation.data);
    expect(decoded.map((f) => f.name)).toEqual(['passing_score', 'score_decimals', 'scorer_id', 'score', 'threshold', 'stamps']);
    expect(decoded[0]!.value.value).toBe(true);
    expect(Number(decoded[1]!.value.value)).toBe(4);
    expect(BigInt(decoded[2]!.value.value as bigint)).toBe(7n);
    expect(Number(decoded[3]!.value.value)).toBe(215_000);
    expect(Number(decoded[4]!.value.value)).toBe(200_000);
    expect(JSON.stringify(decoded[5]!.value.value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).toContain('Github');
  });

  it('the other chain\'s verifier refuses the first chain\'s signed request (the domain differs)', async () => {
    const now = await optimism.blockTime();
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const request = scoreAndPassportRequest(optimism.deployment, other, { nonce: 0n, now });
    const signature = await signRequest(signer, 10, optimism.deployment.verifier as Address, request);
    // The same schema UIDs on the other chain would not be ours there: give it its own, and keep the signature of chain 10.
    const forSepolia = { ...request, attestations: request.attestations.map((a, i) => ({ ...a, schema: (i === 0 ? sepolia.deployment.score_schema_uid : sepolia.deployment.passport_schema_uid) as Hex })) };
    expect((await revertName(sepolia.simulate(forSepolia, signature))).name).toBe('UnknownSigner');
    expect((await revertName(sepolia.simulate(request, signature))).name).toBe('UnknownSigner');
    // The same signature is good on its own chain.
    await optimism.submit(request, signature);
    expect(await optimism.nonceOf(other)).toBe(1n);
    expect(await sepolia.nonceOf(other)).toBe(0n);
  });
});

describe('onchain deploy with --eas', () => {
  it('reuses the chain\'s EAS and the registry it names, and deploys fresh Stampgate contracts beside them', async () => {
    const again = await deployOnchain({
      rpcUrl: sepolia.anvil.url,
      ownerKey: sepolia.ownerKey,
      easAddress: sepolia.deployment.eas.toLowerCase() as Address,
      signerAddress: signer.address,
      deploymentFile,
      saveRpcUrl: false,
      timeoutMs: 10_000,
    });
    expect(again.eas).toBe(sepolia.deployment.eas);
    expect(again.schema_registry).toBe(sepolia.deployment.schema_registry);
    expect(again.verifier).not.toBe(sepolia.deployment.verifier);
    expect(again.score_schema_uid).not.toBe(sepolia.deployment.score_schema_uid);
    const entry = (await readDeploymentFile(deploymentFile)).chains.find((c) => c.chain_id === 11155420)!;
    expect(entry.verifier).toBe(again.verifier);
    expect(entry.rpc_url).toBeUndefined();
    const options = { rpcUrl: sepolia.anvil.url, ownerKey: sepolia.ownerKey, signerAddress: signer.address, deploymentFile, saveRpcUrl: false, timeoutMs: 10_000 };
    await expect(deployOnchain({ ...options, easAddress: signer.address })).rejects.toThrow(/no contract at/);
  });
});
