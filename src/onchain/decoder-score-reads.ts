/**
 * The decoder's `getScore` of one recipient, read over a chain's RPC endpoint for the onchain
 * score route: one `eth_call`, no retries, so OUTBOUND_TIMEOUT_MS bounds the whole read. Every
 * failure (endpoint down, slower than the limit, an error or an answer that is not the decoder's)
 * is 502 `upstream_unavailable`, naming the endpoint by scheme and host only (its URL may carry a key).
 */
import type { Address } from 'viem';
import { rpcClientPool, rpcEndpointName, rpcFailureReason } from '../chain/rpc.js';
import { AppError } from '../errors.js';
import { contractAbi } from './contract-artifacts.js';

/** What the decoder answers: the score × 10^4, all zero when there is no live score. */
export interface DecoderScore {
  score: bigint;
  passing: boolean;
  time: bigint;
  expirationTime: bigint;
}

export type DecoderScoreReader = (rpcUrl: string, decoder: Address, scorerId: bigint, user: Address) => Promise<DecoderScore>;

export function decoderScoreReader(options: { timeoutMs: number }): DecoderScoreReader {
  const clientOf = rpcClientPool({ timeoutMs: options.timeoutMs, retryCount: 0 });
  // The shipped artifact's ABI, as the CLI's decoder reads use: one definition of the contract.
  const abi = contractAbi('StampgateDecoder');
  return async (rpcUrl, decoder, scorerId, user) => {
    try {
      const [score, passing, time, expirationTime] = (await clientOf(rpcUrl).readContract({
        address: decoder,
        abi,
        functionName: 'getScore',
        args: [scorerId, user],
      })) as readonly [bigint, boolean, bigint, bigint];
      return { score, passing, time, expirationTime };
    } catch (error) {
      throw new AppError('upstream_unavailable', `The chain's RPC endpoint (${rpcEndpointName(rpcUrl)}) did not answer the decoder's score: ${rpcFailureReason(error)}.`);
    }
  };
}
