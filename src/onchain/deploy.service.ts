/**
 * `stampgate onchain deploy`: puts Stampgate's contracts on one chain and records them in the
 * deployment file. EAS and its SchemaRegistry are deployed from the committed artifacts, or, with
 * an EAS address (a real chain, where EAS is already deployed), reused with the registry it names.
 * Then the verifier (owned by the sender), the resolver (admitting only that verifier), the decoder,
 * both schemas registered with the resolver, and the attestation signer authorised.
 */
import { type Address, getAddress, type Hex, zeroHash } from 'viem';
import { contractArtifact, schemaStrings, schemaUid } from './contract-artifacts.js';
import { connectSender, OnchainAdminError } from './chain-connection.js';
import { type ChainDeployment, writeChainDeployment } from './deployment-file.js';
import { withDeploymentFileLock } from './deployment-lock.js';

export interface DeployOptions {
  rpcUrl: string;
  /** The deployer and owner of the verifier. */
  ownerKey: Hex;
  /** An EAS already on the chain; without it, EAS and a SchemaRegistry are deployed. */
  easAddress?: Address;
  /** The attestation signer's address, authorised on the new verifier. */
  signerAddress: Address;
  deploymentFile: string;
  /** Record the RPC URL in the deployment file (off when it carries a secret: use ONCHAIN_RPC_URL_<id>). */
  saveRpcUrl: boolean;
  timeoutMs: number;
  /** For the record's added_at; the clock of this process. */
  now?: () => Date;
}

/** What deploy prints: the deployment file's entry and the signer it authorised. */
export type DeployResult = ChainDeployment & { signer: Address; owner: Address };

export async function deployOnchain(options: DeployOptions): Promise<DeployResult> {
  const chain = await connectSender(options.rpcUrl, options.ownerKey, { timeoutMs: options.timeoutMs });
  const easArtifact = contractArtifact('EAS');
  const registryArtifact = contractArtifact('SchemaRegistry');

  let eas: Address;
  let registry: Address;
  if (options.easAddress) {
    eas = getAddress(options.easAddress);
    const code = await chain.publicClient.getCode({ address: eas });
    if (!code || code === '0x') throw new OnchainAdminError(`no contract at ${eas} on chain ${chain.chainId}: pass the chain's EAS address to --eas`);
    registry = getAddress(await chain.read<Address>(eas, easArtifact.abi, 'getSchemaRegistry'));
  } else {
    registry = await chain.deploy(registryArtifact.abi, registryArtifact.bytecode);
    eas = await chain.deploy(easArtifact.abi, easArtifact.bytecode, [registry]);
  }
  const easVersion = await chain.read<string>(eas, easArtifact.abi, 'version');

  const verifierArtifact = contractArtifact('StampgateVerifier');
  const resolverArtifact = contractArtifact('StampgateResolver');
  const decoderArtifact = contractArtifact('StampgateDecoder');
  const verifier = await chain.deploy(verifierArtifact.abi, verifierArtifact.bytecode, [eas, chain.account]);
  const resolver = await chain.deploy(resolverArtifact.abi, resolverArtifact.bytecode, [eas, verifier]);
  const decoder = await chain.deploy(decoderArtifact.abi, decoderArtifact.bytecode, [eas, resolver]);

  const schemas = schemaStrings();
  const uids = { score: schemaUid(schemas.score, resolver), passport: schemaUid(schemas.passport, resolver) };
  // The resolver computes its schemas' UIDs from its own copy of the strings: they must be these.
  const resolverUids = {
    score: await chain.read<Hex>(resolver, resolverArtifact.abi, 'scoreSchemaUid'),
    passport: await chain.read<Hex>(resolver, resolverArtifact.abi, 'passportSchemaUid'),
  };
  if (resolverUids.score !== uids.score || resolverUids.passport !== uids.passport) {
    throw new OnchainAdminError('the resolver\'s schema strings differ from contracts/abi/schemas.json; rebuild with `npm run build:contracts`');
  }
  for (const kind of ['score', 'passport'] as const) {
    const record = await chain.read<{ uid: Hex }>(registry, registryArtifact.abi, 'getSchema', [uids[kind]]);
    if (record.uid === zeroHash) await chain.write(registry, registryArtifact.abi, 'register', [schemas[kind], resolver, true]);
  }

  const signer = getAddress(options.signerAddress);
  if (!(await chain.read<boolean>(verifier, verifierArtifact.abi, 'isSigner', [signer]))) {
    await chain.write(verifier, verifierArtifact.abi, 'addSigner', [signer]);
  }

  const deployment: ChainDeployment = {
    chain_id: chain.chainId,
    ...(options.saveRpcUrl ? { rpc_url: options.rpcUrl } : {}),
    eas,
    schema_registry: registry,
    verifier,
    resolver,
    decoder,
    score_schema: schemas.score,
    score_schema_uid: uids.score,
    passport_schema: schemas.passport,
    passport_schema_uid: uids.passport,
    eas_version: easVersion,
    signers: [{ address: signer, added_at: (options.now?.() ?? new Date()).toISOString(), removed_at: null }],
  };
  await withDeploymentFileLock(options.deploymentFile, () => writeChainDeployment(options.deploymentFile, deployment));
  return { ...deployment, signer, owner: chain.account };
}
