/**
 * The owner's operations on a deployed chain: authorise and remove signers (recorded in the
 * deployment file with their times, which is what the chains listing publishes), set the fee, and
 * revoke an address's attestations for a ban (found through the resolver's caches, revoked through
 * the verifier: it is their attester, so only it may).
 */
import { type Address, getAddress, type Hex, zeroHash } from 'viem';
import { contractAbi } from './contract-artifacts.js';
import { connectSender, deployedChain, type OnchainFileSettings, OnchainAdminError, type SendingConnection } from './chain-connection.js';
import { type ChainDeployment, readDeploymentFile, type SignerRecord, writeChainDeployment } from './deployment-file.js';
import { withDeploymentFileLock } from './deployment-lock.js';

export interface AdminOptions {
  config: OnchainFileSettings;
  chainId: number;
  ownerKey: Hex;
  timeoutMs: number;
  now?: () => Date;
}

async function ownerConnection(options: AdminOptions): Promise<{ chain: SendingConnection; deployment: ChainDeployment; file: string }> {
  const { deployment, rpcUrl, file } = await deployedChain(options.config, options.chainId);
  const chain = await connectSender(rpcUrl, options.ownerKey, { timeoutMs: options.timeoutMs, expectedChainId: options.chainId });
  const owner = await chain.read<Address>(deployment.verifier as Address, contractAbi('StampgateVerifier'), 'owner');
  if (getAddress(owner) !== chain.account) {
    throw new OnchainAdminError(`the owner key is ${chain.account}, but the verifier on chain ${options.chainId} is owned by ${getAddress(owner)}`);
  }
  return { chain, deployment, file };
}

/** Changes the chain's signer records as the file holds them now (another command may have written it meanwhile). */
async function updateSigners(file: string, chainId: number, change: (signers: SignerRecord[]) => SignerRecord[]): Promise<SignerRecord[]> {
  return withDeploymentFileLock(file, async () => {
    const entry = (await readDeploymentFile(file)).chains.find((c) => c.chain_id === chainId);
    if (!entry) throw new OnchainAdminError(`chain ${chainId} left ${file} while its signers changed`);
    const signers = change(entry.signers);
    await writeChainDeployment(file, { ...entry, signers });
    return signers;
  });
}

export interface SignersResult {
  chain_id: number;
  verifier: string;
  /** The transaction, or null when the verifier already had the asked state. */
  transaction: Hex | null;
  signers: SignerRecord[];
}

export async function addSigner(options: AdminOptions, signer: Address): Promise<SignersResult> {
  const { chain, deployment, file } = await ownerConnection(options);
  const address = getAddress(signer);
  const verifier = deployment.verifier as Address;
  const abi = contractAbi('StampgateVerifier');
  const transaction = (await chain.read<boolean>(verifier, abi, 'isSigner', [address])) ? null : await chain.write(verifier, abi, 'addSigner', [address]);
  const now = (options.now?.() ?? new Date()).toISOString();
  const signers = await updateSigners(file, options.chainId, (current) =>
    current.some((s) => getAddress(s.address) === address && s.removed_at === null) ? current : [...current, { address, added_at: now, removed_at: null }],
  );
  return { chain_id: options.chainId, verifier: getAddress(verifier), transaction, signers };
}

export async function removeSigner(options: AdminOptions, signer: Address): Promise<SignersResult> {
  const { chain, deployment, file } = await ownerConnection(options);
  const address = getAddress(signer);
  const verifier = deployment.verifier as Address;
  const abi = contractAbi('StampgateVerifier');
  const transaction = (await chain.read<boolean>(verifier, abi, 'isSigner', [address])) ? await chain.write(verifier, abi, 'removeSigner', [address]) : null;
  const now = (options.now?.() ?? new Date()).toISOString();
  const signers = await updateSigners(file, options.chainId, (current) =>
    current.map((s) => (getAddress(s.address) === address && s.removed_at === null ? { ...s, removed_at: now } : s)),
  );
  return { chain_id: options.chainId, verifier: getAddress(verifier), transaction, signers };
}

export async function setFee(options: AdminOptions, wei: bigint): Promise<{ chain_id: number; verifier: string; fee: string; transaction: Hex }> {
  const { chain, deployment } = await ownerConnection(options);
  const transaction = await chain.write(deployment.verifier as Address, contractAbi('StampgateVerifier'), 'setFee', [wei]);
  return { chain_id: options.chainId, verifier: getAddress(deployment.verifier), fee: wei.toString(), transaction };
}

export interface RevokeResult {
  chain_id: number;
  address: Address;
  /** The score attestations revoked, one per scorer that had a live one. */
  scores: { scorer_id: string; uid: Hex }[];
  passport_uid: Hex | null;
  transactions: Hex[];
}

/** Revokes every attestation the resolver holds for `user` (latest score per scorer, latest passport). */
export async function revokeAddress(options: AdminOptions, user: Address): Promise<RevokeResult> {
  const { chain, deployment } = await ownerConnection(options);
  const address = getAddress(user);
  const resolver = deployment.resolver as Address;
  const resolverAbi = contractAbi('StampgateResolver');
  const verifier = deployment.verifier as Address;
  const verifierAbi = contractAbi('StampgateVerifier');

  const scorerIds = await chain.read<readonly bigint[]>(resolver, resolverAbi, 'scorerIdsOf', [address]);
  const scores: { scorer_id: string; uid: Hex }[] = [];
  for (const scorerId of scorerIds) {
    const uid = await chain.read<Hex>(resolver, resolverAbi, 'scoreUid', [address, scorerId]);
    if (uid !== zeroHash) scores.push({ scorer_id: scorerId.toString(), uid });
  }
  const passportUid = await chain.read<Hex>(resolver, resolverAbi, 'passportUid', [address]);

  const transactions: Hex[] = [];
  if (scores.length > 0) {
    transactions.push(await chain.write(verifier, verifierAbi, 'multiRevoke', [deployment.score_schema_uid, scores.map((s) => s.uid)]));
  }
  if (passportUid !== zeroHash) transactions.push(await chain.write(verifier, verifierAbi, 'revoke', [deployment.passport_schema_uid, passportUid]));
  return { chain_id: options.chainId, address, scores, passport_uid: passportUid === zeroHash ? null : passportUid, transactions };
}
