/**
 * The chain side of the operator push: the verifier call's ABI (with the custom errors of every
 * contract it reaches, so a refusal decodes to its name), fee caps, signing a raw transaction,
 * telling "already broadcast" answers from failures, and the score attestation's UID of a receipt.
 */
import {
  type Abi,
  type AbiItem,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  decodeErrorResult,
  type Hex,
  http,
  keccak256,
  parseAbi,
  parseEventLogs,
  type PrivateKeyAccount,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { contractAbi } from './contract-artifacts.js';

/** The verifier's ABI plus the errors of the resolver and EAS, which a refusal may come from. */
export const verifierCallAbi: Abi = (() => {
  const items: AbiItem[] = [...contractAbi('StampgateVerifier')];
  const seen = new Set(items.filter((i) => i.type === 'error').map((i) => (i as { name: string }).name));
  for (const name of ['StampgateResolver', 'EAS'] as const) {
    for (const item of contractAbi(name)) {
      if (item.type !== 'error' || seen.has(item.name)) continue;
      seen.add(item.name);
      items.push(item);
    }
  }
  return items;
})();

const attestedEvent = parseAbi(['event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)']);

/** One client per RPC URL, kept (it holds no connection of its own). */
export function pushClients(options: { timeoutMs: number }) {
  const clients = new Map<string, PublicClient>();
  return (url: string): PublicClient => {
    let client = clients.get(url);
    if (!client) {
      if (clients.size >= 64) clients.clear();
      client = createPublicClient({ transport: http(url, { timeout: options.timeoutMs, retryCount: 0 }), pollingInterval: 250 }) as PublicClient;
      clients.set(url, client);
    }
    return client;
  };
}

/** The custom error's name (or the revert reason) when `error` is a contract refusal; null for anything else (RPC down, funds). */
export function refusalOf(error: unknown): string | null {
  if (!(error instanceof BaseError)) return null;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) return null;
  if (reverted.data?.errorName) return reverted.data.errorName;
  return reverted.reason ? `reverted: ${reverted.reason}` : 'reverted';
}

/**
 * The custom error a mined, reverted transaction gave: its call trace's output where the node
 * traces (anvil, geth, most archive providers), else the call replayed on the state its block left
 * (where a transaction earlier in the same block, the usual cause, has had its effect).
 */
export async function revertOfMined(client: PublicClient, from: Address, tx: { hash: Hex; to: Address; data: Hex; value: bigint }, receipt: TransactionReceipt): Promise<string> {
  let data: Hex | null = null;
  try {
    const trace = (await client.request({ method: 'debug_traceTransaction', params: [tx.hash, { tracer: 'callTracer' }] } as never)) as { output?: string } | null;
    if (trace?.output && /^0x[0-9a-f]{8}/i.test(trace.output)) data = trace.output as Hex;
  } catch {
    // No tracing on this node.
  }
  if (data === null) {
    try {
      await client.call({ account: from, to: tx.to, data: tx.data, value: tx.value, blockNumber: receipt.blockNumber });
    } catch (error) {
      data = revertData(error);
    }
  }
  if (data) {
    try {
      return decodeErrorResult({ abi: verifierCallAbi, data }).errorName;
    } catch {
      // Not one of ours.
    }
  }
  return 'reverted';
}

function revertData(error: unknown): Hex | null {
  if (!(error instanceof BaseError)) return null;
  const found = error.walk((e) => typeof (e as { data?: unknown }).data === 'string' && /^0x[0-9a-f]{8}/i.test((e as { data: string }).data));
  return found ? ((found as unknown as { data: Hex }).data) : null;
}

export interface FeeCaps {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * Fee caps with room for the base fee to double: a signed transaction is re-broadcast unchanged
 * (never replaced), so its cap must outlast a rise in the base fee.
 */
export async function feeCaps(client: PublicClient): Promise<FeeCaps> {
  const estimate = await client.estimateFeesPerGas();
  return { maxFeePerGas: estimate.maxFeePerGas * 2n, maxPriorityFeePerGas: estimate.maxPriorityFeePerGas };
}

export async function signCall(
  account: PrivateKeyAccount,
  tx: { chainId: number; to: Address; data: Hex; value: bigint; gas: bigint; nonce: number; fees: FeeCaps },
): Promise<{ rawTx: Hex; txHash: Hex }> {
  const rawTx = await account.signTransaction({
    type: 'eip1559',
    chainId: tx.chainId,
    to: tx.to,
    data: tx.data,
    value: tx.value,
    // The estimate is for the state now; a little room for the state it is mined on.
    gas: (tx.gas * 12n) / 10n,
    nonce: tx.nonce,
    maxFeePerGas: tx.fees.maxFeePerGas,
    maxPriorityFeePerGas: tx.fees.maxPriorityFeePerGas,
  });
  return { rawTx, txHash: keccak256(rawTx) };
}

/**
 * What a node's refusal of a raw transaction means: `known` (this very transaction is in its pool
 * or mined: the receipt tells), `nonce-used` (its nonce is taken: mined, or replaced by another
 * transaction of the sender), or null (anything else: try again later).
 */
export function broadcastRefusal(error: unknown): 'known' | 'nonce-used' | null {
  const text = [(error as Error)?.message, (error as { details?: string })?.details].join(' ').toLowerCase();
  if (/nonce too low|nonce is too low|oldnonce|nonce has already been used/.test(text)) return 'nonce-used';
  if (/already known|already imported|known transaction|already exists|alreadyknown/.test(text)) return 'known';
  return null;
}

/** The UID of the score attestation the receipt's EAS `Attested` logs carry for `recipient`. */
export function scoreUidOf(receipt: TransactionReceipt, recipient: string, scoreSchemaUid: string): Hex | null {
  const logs = parseEventLogs({ abi: attestedEvent, logs: receipt.logs, eventName: 'Attested', strict: false });
  const found = logs.find(
    (log) => log.args.schemaUID?.toLowerCase() === scoreSchemaUid.toLowerCase() && log.args.recipient?.toLowerCase() === recipient.toLowerCase(),
  );
  return found?.args.uid ?? null;
}
