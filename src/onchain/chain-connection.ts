/**
 * Connections to one chain for the operator's commands (deploy, signers, fee, revoke, read): viem
 * clients with a time limit on every request, transactions sent one at a time and awaited, and the
 * chain of the deployment file with its RPC URL (`ONCHAIN_RPC_URL_<id>` first, then the file's).
 */
import { join } from 'node:path';
import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Config } from '../config/index.js';
import { rpcEndpointName } from '../chain/rpc.js';
import { type ChainDeployment, readDeploymentFile } from './deployment-file.js';

export class OnchainAdminError extends Error {
  override name = 'OnchainAdminError';
}

export type OnchainFileSettings = Pick<Config, 'onchainConfigFile' | 'dataDir' | 'onchainRpcUrls'>;

export function deploymentFilePath(config: Pick<Config, 'onchainConfigFile' | 'dataDir'>): string {
  return config.onchainConfigFile ?? join(config.dataDir, 'onchain.json');
}

/** The chain's entry of the deployment file and the RPC URL to reach it. */
export async function deployedChain(config: OnchainFileSettings, chainId: number): Promise<{ deployment: ChainDeployment; rpcUrl: string; file: string }> {
  const file = deploymentFilePath(config);
  const deployment = (await readDeploymentFile(file)).chains.find((c) => c.chain_id === chainId);
  if (!deployment) throw new OnchainAdminError(`chain ${chainId} is not in ${file}; deploy to it first with \`stampgate onchain deploy --rpc-url URL\``);
  const rpcUrl = config.onchainRpcUrls[chainId] ?? deployment.rpc_url;
  if (!rpcUrl) throw new OnchainAdminError(`no RPC URL for chain ${chainId}: set ONCHAIN_RPC_URL_${chainId} (or rpc_url in ${file})`);
  return { deployment, rpcUrl, file };
}

export interface ChainConnection {
  chainId: number;
  publicClient: PublicClient;
  /** Reads a view function (the ABIs are loaded at run time, so results are typed by the caller). */
  read<T>(address: Address, abi: Abi, functionName: string, args?: readonly unknown[]): Promise<T>;
}

export interface SendingConnection extends ChainConnection {
  account: Address;
  deploy(abi: Abi, bytecode: Hex, args?: readonly unknown[]): Promise<Address>;
  /** Sends a contract call and waits for its receipt; a revert throws naming the function. */
  write(address: Address, abi: Abi, functionName: string, args?: readonly unknown[]): Promise<Hex>;
}

export interface ConnectOptions {
  /** Time limit of each RPC request. */
  timeoutMs: number;
  /** Longest wait for one transaction's receipt. */
  receiptTimeoutMs?: number;
}

/** A read-only connection; the chain id is asked once, and must be `expectedChainId` when given. */
export async function connectChain(rpcUrl: string, options: ConnectOptions & { expectedChainId?: number }): Promise<ChainConnection> {
  const transport = http(rpcUrl, { timeout: options.timeoutMs, retryCount: 1 });
  const probe = createPublicClient({ transport });
  const chainId = await probe.getChainId();
  if (options.expectedChainId !== undefined && chainId !== options.expectedChainId) {
    throw new OnchainAdminError(`${rpcEndpointName(rpcUrl)} is chain ${chainId}, not chain ${options.expectedChainId}`);
  }
  const chain = chainOf(chainId, rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 250 }) as PublicClient;
  return {
    chainId,
    publicClient,
    read: async <T>(address: Address, abi: Abi, functionName: string, args: readonly unknown[] = []) =>
      (await publicClient.readContract({ address, abi, functionName, args })) as T,
  };
}

/** A connection that also sends transactions from `privateKey`, one at a time, each awaited. */
export async function connectSender(
  rpcUrl: string,
  privateKey: Hex,
  options: ConnectOptions & { expectedChainId?: number },
): Promise<SendingConnection> {
  const reader = await connectChain(rpcUrl, options);
  const account: Account = privateKeyToAccount(privateKey);
  const chain = chainOf(reader.chainId, rpcUrl);
  const wallet: WalletClient<Transport, Chain, Account> = createWalletClient({
    chain,
    account,
    transport: http(rpcUrl, { timeout: options.timeoutMs, retryCount: 1 }),
  });
  const receiptTimeoutMs = options.receiptTimeoutMs ?? 180_000;
  const receiptOf = (hash: Hex) => reader.publicClient.waitForTransactionReceipt({ hash, timeout: receiptTimeoutMs });
  return {
    ...reader,
    account: account.address,
    async deploy(abi, bytecode, args = []) {
      const hash = await wallet.deployContract({ abi, bytecode, args });
      const receipt = await receiptOf(hash);
      if (receipt.status !== 'success' || !receipt.contractAddress) throw new OnchainAdminError(`the deployment in transaction ${hash} failed`);
      return getAddress(receipt.contractAddress);
    },
    async write(address, abi, functionName, args = []) {
      // Simulating first turns a refusal into the contract's own error before any gas is spent.
      const { request } = await reader.publicClient.simulateContract({ address, abi, functionName, args, account });
      const hash = await wallet.writeContract(request);
      const receipt = await receiptOf(hash);
      if (receipt.status !== 'success') throw new OnchainAdminError(`${functionName} reverted in transaction ${hash}`);
      return hash;
    },
  };
}

function chainOf(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}
