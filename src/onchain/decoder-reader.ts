/**
 * Reads the decoder over RPC: a recipient's score per scorer and its passport, as the chain alone
 * answers them (`stampgate onchain read` never opens the database). Big integers are decimal text,
 * addresses EIP-55.
 */
import { type Address, getAddress, type Hex } from 'viem';
import { contractAbi } from './contract-artifacts.js';
import type { ChainConnection } from './chain-connection.js';

export interface OnchainScore {
  scorer_id: string;
  /** The score × 10^score_decimals, as decimal text. */
  score: string;
  score_decimals: number;
  passing: boolean;
  /** The decoder's isHuman: passing, unexpired, unrevoked. */
  is_human: boolean;
  /** The attestation's onchain time (Unix seconds); "0" when there is no live score. */
  time: string;
  expiration_time: string;
}

export interface OnchainStamp {
  provider: string;
  hash: Hex;
  issuance_date: string;
  expiration_date: string;
}

export interface OnchainRead {
  chain_id: number;
  decoder: Address;
  address: Address;
  /** null when no scorer was asked for. */
  score: OnchainScore | null;
  passport: OnchainStamp[];
}

export async function readScore(chain: ChainConnection, decoder: Address, scorerId: bigint, user: Address): Promise<OnchainScore> {
  const abi = contractAbi('StampgateDecoder');
  const [score, passing, time, expirationTime] = await chain.read<[bigint, boolean, bigint, bigint]>(decoder, abi, 'getScore', [scorerId, user]);
  const isHuman = await chain.read<boolean>(decoder, abi, 'isHuman', [scorerId, user]);
  return {
    scorer_id: scorerId.toString(),
    score: score.toString(),
    score_decimals: 4,
    passing,
    is_human: isHuman,
    time: time.toString(),
    expiration_time: expirationTime.toString(),
  };
}

export async function readPassport(chain: ChainConnection, decoder: Address, user: Address): Promise<OnchainStamp[]> {
  const stamps = await chain.read<readonly { provider: string; hash: Hex; issuanceDate: bigint; expirationDate: bigint }[]>(
    decoder,
    contractAbi('StampgateDecoder'),
    'getPassport',
    [user],
  );
  return stamps.map((s) => ({
    provider: s.provider,
    hash: s.hash,
    issuance_date: s.issuanceDate.toString(),
    expiration_date: s.expirationDate.toString(),
  }));
}

export async function readDecoder(chain: ChainConnection, decoder: Address, user: Address, scorerId: bigint | null): Promise<OnchainRead> {
  const address = getAddress(user);
  return {
    chain_id: chain.chainId,
    decoder: getAddress(decoder),
    address,
    score: scorerId === null ? null : await readScore(chain, decoder, scorerId, address),
    passport: await readPassport(chain, decoder, address),
  };
}
