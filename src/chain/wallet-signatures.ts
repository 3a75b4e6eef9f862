import {
  BaseError,
  createPublicClient,
  hashMessage,
  http,
  isErc6492Signature,
  parseErc6492Signature,
  RpcRequestError,
  TimeoutError,
  type Address,
  type Hex,
  type Transport,
} from 'viem';
import { verifyHash } from 'viem/actions';
import { isUnreachable, rpcEndpointName, rpcFailureReason } from './rpc.js';
import { recoverAddressFromHash, SignatureError } from './signatures.js';

/**
 * Ownership proofs by wallet signature, for every kind of wallet: an externally owned
 * account (ecrecover, checked locally and first, so the common case never waits on a
 * node), an ERC-1271 contract wallet already deployed, and an ERC-6492 signature of a
 * contract wallet not deployed yet. Contract kinds need the chain's JSON-RPC endpoint;
 * viem's `verifyHash` runs the ERC-6492 universal validator there by `eth_call`, which
 * answers for deployed and counterfactual wallets alike.
 *
 * Never throws: every outcome is a result, and endpoint trouble (`rpc_timeout`,
 * `rpc_unavailable`) is kept apart from a signature that is simply not valid, so a
 * caller can answer 502 for the one and 400 for the other.
 */

export type WalletSignatureKind = 'eoa' | 'erc1271' | 'erc6492';

export type WalletSignatureFailure =
  /** Not a 0x-prefixed 20-byte address, or the zero address. */
  | 'invalid_address'
  /** Neither a message string nor a 32-byte hash, or both. */
  | 'malformed_message'
  | 'malformed_hash'
  /** Not 0x-prefixed hex of whole bytes, empty, too long, or an ERC-6492 wrapper that does not decode. */
  | 'malformed_signature'
  /** The address's own key signed, but with the high-s mirror form (see signatures.ts). */
  | 'non_canonical_signature'
  /** An encoding beyond the three kinds (ERC-8010 pre-delegated signatures). */
  | 'unsupported_signature'
  /** Checked, and the address did not sign this. */
  | 'signature_mismatch'
  /** Not an EOA signature of the address, and no endpoint to ask a contract wallet. */
  | 'smart_wallet_not_configured'
  /** The endpoint did not answer within the time limit. */
  | 'rpc_timeout'
  /** The endpoint could not be reached or answered with an error other than a revert. */
  | 'rpc_unavailable';

export type WalletSignatureResult =
  | { valid: true; kind: WalletSignatureKind }
  | { valid: false; reason: WalletSignatureFailure; detail: string };

export interface SmartWalletRpc {
  /** The chain's JSON-RPC endpoint (http or https). */
  url: string;
  /** Time limit for the whole contract check. */
  timeoutMs: number;
}

interface VerifyCommon {
  address: string;
  /** 0x-prefixed hex. */
  signature: string;
  /** Without it (null or absent) only EOA signatures can pass. */
  rpc?: SmartWalletRpc | null;
  /** Upper bound checked before anything else; default {@link DEFAULT_MAX_SIGNATURE_BYTES}. */
  maxSignatureBytes?: number;
}

export type VerifyWalletSignatureInput = VerifyCommon &
  (
    | { /** Text signed with EIP-191 `personal_sign` (signing messages, SIWE). */ message: string; hash?: undefined }
    | { /** The 32-byte digest the wallet signed. */ hash: string; message?: undefined }
  );

/**
 * 8 KiB: an ERC-6492 wrapper holds a factory call and an inner signature, a few hundred
 * bytes for real wallets (passkey and multisig signatures included); this leaves room
 * while keeping what reaches the node small.
 */
export const DEFAULT_MAX_SIGNATURE_BYTES = 8192;

const ADDRESS_HEX = /^0x[0-9a-fA-F]{40}$/;
const HASH_HEX = /^0x[0-9a-fA-F]{64}$/;
const BYTES_HEX = /^0x(?:[0-9a-fA-F]{2})+$/;
const ZERO_ADDRESS = /^0x0{40}$/;
// ERC-8010 ends a pre-delegated signature with this 32-byte magic; viem would verify it
// through an EIP-7702 authorization, a fourth kind the contract does not ask for.
const ERC8010_SUFFIX = '8010'.repeat(16);
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** True for failures of the endpoint rather than of the signature (answer 502/503, not 400). */
export function isUpstreamFailure(reason: WalletSignatureFailure): boolean {
  return reason === 'rpc_timeout' || reason === 'rpc_unavailable';
}

function fail(reason: WalletSignatureFailure, detail: string): WalletSignatureResult {
  return { valid: false, reason, detail };
}

/** Checks that `signature` proves `address` signed `message` (EIP-191) or `hash`. */
export async function verifyWalletSignature(input: VerifyWalletSignatureInput): Promise<WalletSignatureResult> {
  const maxBytes = input.maxSignatureBytes ?? DEFAULT_MAX_SIGNATURE_BYTES;
  const { address, signature } = input;
  if (typeof address !== 'string' || !ADDRESS_HEX.test(address) || ZERO_ADDRESS.test(address)) {
    return fail('invalid_address', 'The address must be a non-zero 0x-prefixed 20-byte hex address.');
  }
  // Length before pattern, so an oversized input costs nothing to refuse.
  if (typeof signature !== 'string' || signature.length > 2 + 2 * maxBytes || !BYTES_HEX.test(signature)) {
    return fail('malformed_signature', `The signature must be 0x-prefixed hex of 1 to ${maxBytes} bytes.`);
  }
  const digest = digestOf(input);
  if (typeof digest !== 'string') return digest;
  // Any letter case is taken; viem would refuse a mixed-case address whose checksum is
  // off, and compares the ERC-6492 suffix in lower case.
  const sig = signature.toLowerCase() as Hex;
  const wallet = address.toLowerCase() as Address;

  if (sig.endsWith(ERC8010_SUFFIX)) {
    return fail('unsupported_signature', 'ERC-8010 signatures are not accepted; sign as an EOA, ERC-1271 or ERC-6492 wallet.');
  }
  const counterfactual = isErc6492Signature(sig);
  if (counterfactual) {
    try {
      parseErc6492Signature(sig);
    } catch {
      return fail('malformed_signature', 'The ERC-6492 signature does not decode as (factory, factory calldata, signature).');
    }
  } else {
    const eoa = checkEoa(wallet, digest, sig);
    if (eoa) return eoa;
  }

  if (!input.rpc) {
    return fail(
      'smart_wallet_not_configured',
      'The signature is not an EOA signature of this address, and smart-wallet (ERC-1271/ERC-6492) verification is not configured on this server.',
    );
  }
  return checkContract(input.rpc, wallet, digest, sig, counterfactual ? 'erc6492' : 'erc1271');
}

function digestOf(input: VerifyWalletSignatureInput): Hex | WalletSignatureResult {
  const hasMessage = input.message !== undefined;
  const hasHash = input.hash !== undefined;
  if (hasMessage === hasHash) return fail('malformed_message', 'Give either the signed message or its 32-byte hash, not both.');
  if (hasMessage) {
    if (typeof input.message !== 'string') return fail('malformed_message', 'The message must be a string.');
    return hashMessage(input.message);
  }
  if (typeof input.hash !== 'string' || !HASH_HEX.test(input.hash)) {
    return fail('malformed_hash', 'The hash must be 32 bytes of 0x-prefixed hex.');
  }
  return input.hash as Hex;
}

/**
 * The local ecrecover path (`address` lower-case). Answers a result when the question is settled without a
 * node (the address's key signed: valid, or refused for high s), null when the
 * signature may still be a contract wallet's.
 */
function checkEoa(address: Address, hash: Hex, signature: Hex): WalletSignatureResult | null {
  const bytes = (signature.length - 2) / 2;
  // EIP-2098 compact form: yParity rides in the top bit of s. viem's fallback would
  // accept it anyway, so it is recognised here as what it is, an EOA signature.
  const full = bytes === 64 ? expandCompact(signature) : bytes === 65 ? signature : null;
  if (!full) return null;
  const signer = recoverOrNull(hash, full);
  if (signer === 'high-s') {
    // A mirrored signature by this very key is malleated, not a contract's signature:
    // refuse it here, or the validator's own ecrecover would accept it by RPC.
    if (recoverOrNull(hash, mirror(full)) === address) {
      return fail('non_canonical_signature', 'The signature uses the high-s form; sign again with a current wallet.');
    }
    return null;
  }
  return signer === address ? { valid: true, kind: 'eoa' } : null;
}

function recoverOrNull(hash: Hex, signature: Hex): string | null | 'high-s' {
  try {
    return recoverAddressFromHash(hash, signature);
  } catch (error) {
    if (error instanceof SignatureError && error.code === 'non_canonical_signature') return 'high-s';
    return null;
  }
}

function expandCompact(signature: Hex): Hex {
  const r = signature.slice(2, 66);
  const yParityAndS = BigInt(`0x${signature.slice(66, 130)}`);
  const yParity = yParityAndS >> 255n;
  const s = yParityAndS & ((1n << 255n) - 1n);
  return `0x${r}${s.toString(16).padStart(64, '0')}${(27n + yParity).toString(16)}` as Hex;
}

/** The other signature of the same key and hash: s → n − s, recovery id flipped. */
function mirror(signature: Hex): Hex {
  const r = signature.slice(2, 66);
  const s = CURVE_ORDER - BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  const flipped = v === 27 || v === 28 ? 55 - v : 1 - v;
  return `0x${r}${s.toString(16).padStart(64, '0')}${flipped.toString(16).padStart(2, '0')}` as Hex;
}

/**
 * A transport that remembers every failed request. viem's `verifyHash` turns any failed
 * `eth_call` into "not valid", the endpoint being down included; what it saw is read back
 * from here to tell the two apart.
 */
function observedTransport(url: string, timeoutMs: number, failures: unknown[]): Transport {
  const base = http(url, { timeout: timeoutMs, retryCount: 0, batch: false });
  return ((params: Parameters<Transport>[0]) => {
    const transport = base(params);
    const request = (async (args: unknown, options: unknown) => {
      try {
        return await (transport.request as (a: unknown, o: unknown) => Promise<unknown>)(args, options);
      } catch (error) {
        failures.push(error);
        throw error;
      }
    }) as typeof transport.request;
    return { ...transport, request };
  }) as Transport;
}

/** A JSON-RPC error that is the validator reverting: an answer about the signature, not endpoint trouble. */
function isRevert(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const rpc = error.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
  if (!rpc) return false;
  return rpc.code === 3 || /revert/i.test(rpc.details ?? rpc.shortMessage);
}

function upstreamFailure(url: string, error: unknown): WalletSignatureResult {
  const endpoint = rpcEndpointName(url);
  const timedOut = error instanceof BaseError ? error.walk((e) => e instanceof TimeoutError) !== null : false;
  if (timedOut) return fail('rpc_timeout', `The Ethereum RPC endpoint ${endpoint} did not answer in time to verify the smart-wallet signature.`);
  const why = isUnreachable(error) ? rpcFailureReason(error) : `it answered with an error (${rpcFailureReason(error)})`;
  return fail('rpc_unavailable', `The Ethereum RPC endpoint ${endpoint} could not verify the smart-wallet signature: ${why}.`);
}

async function checkContract(
  rpc: SmartWalletRpc,
  address: Address,
  hash: Hex,
  signature: Hex,
  kind: 'erc1271' | 'erc6492',
): Promise<WalletSignatureResult> {
  const failures: unknown[] = [];
  const client = createPublicClient({ transport: observedTransport(rpc.url, rpc.timeoutMs, failures) });
  let timer: NodeJS.Timeout | undefined;
  // The transport's own limit covers one request; this one bounds the whole check.
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), rpc.timeoutMs);
  });
  try {
    const outcome = await Promise.race([verifyHash(client, { address, hash, signature }), deadline]);
    if (outcome === 'timeout') return upstreamFailure(rpc.url, new TimeoutError({ body: {}, url: rpc.url }));
    const trouble = failures.find((e) => !isRevert(e));
    if (trouble !== undefined) return upstreamFailure(rpc.url, trouble);
    if (outcome) return { valid: true, kind };
    return fail(
      'signature_mismatch',
      kind === 'erc6492'
        ? 'The ERC-6492 signature is not valid for this address: the wallet its factory deploys does not accept it.'
        : 'The signature is not valid for this address: not its EOA signature, and no contract wallet there accepts it (ERC-1271).',
    );
  } catch (error) {
    // With no failed request behind it, viem refused the input itself before asking.
    if (failures.length === 0 && !isUnreachable(error)) {
      return fail('malformed_signature', `The signature could not be checked: ${rpcFailureReason(error)}.`);
    }
    return upstreamFailure(rpc.url, error);
  } finally {
    clearTimeout(timer);
  }
}
