/**
 * The verifier's state an attestation request needs, read over the chain's RPC endpoint: the
 * recipient's nonce and the current fee. Every failure (endpoint down, slower than
 * OUTBOUND_TIMEOUT_MS, an error or an answer that is not the verifier's) is 502
 * `upstream_unavailable`; the endpoint is named by scheme and host only (its URL may carry a key).
 */
import type { Address } from 'viem';
import { rpcClientPool, rpcEndpointName, rpcFailureReason } from '../chain/rpc.js';
import { AppError } from '../errors.js';

// The two views an attestation request needs; the verifier's whole ABI is contracts/abi/StampgateVerifier.json.
const verifierViews = [
  { type: 'function', name: 'recipientNonces', stateMutability: 'view', inputs: [{ name: 'recipient', type: 'address' }], outputs: [{ name: '', type: 'uint256' }] },
  { type: 'function', name: 'fee', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'uint256' }] },
] as const;

export interface VerifierState {
  nonce: bigint;
  fee: bigint;
}

export type VerifierReader = (rpcUrl: string, verifier: Address, recipient: Address) => Promise<VerifierState>;

/** Reads with one viem client per endpoint, no retries. */
export function verifierReader(options: { timeoutMs: number }): VerifierReader {
  const clientOf = rpcClientPool({ timeoutMs: options.timeoutMs, retryCount: 0 });
  return async (rpcUrl, verifier, recipient) => {
    const client = clientOf(rpcUrl);
    try {
      const [nonce, fee] = await Promise.all([
        client.readContract({ address: verifier, abi: verifierViews, functionName: 'recipientNonces', args: [recipient] }),
        client.readContract({ address: verifier, abi: verifierViews, functionName: 'fee' }),
      ]);
      return { nonce, fee };
    } catch (error) {
      throw new AppError('upstream_unavailable', `The chain's RPC endpoint (${rpcEndpointName(rpcUrl)}) did not answer the verifier's nonce and fee: ${rpcFailureReason(error)}.`);
    }
  };
}
