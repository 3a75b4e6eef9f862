import { AppError } from '../errors.js';
import { createRpcClient, rpcEndpointName, rpcFailureReason } from './rpc.js';
import {
  DEFAULT_MAX_SIGNATURE_BYTES,
  isUpstreamFailure,
  type SmartWalletRpc,
  verifyWalletSignature,
  type WalletSignatureKind,
  type WalletSignatureResult,
} from './wallet-signatures.js';

/**
 * The one answer to "did this wallet sign this text?", for every place a wallet proves
 * ownership (submission signatures, SIWE sign-in for wallet stamp writes, the portal's
 * sign-in). It turns the outcomes of `verifyWalletSignature` into the service's errors:
 * a signature that does not prove ownership is 400 `invalid_signature`, an endpoint that
 * fails or hangs is 502 `upstream_unavailable` (the caller must then leave its nonce
 * usable: nothing about the signature was learnt).
 *
 * Callers check their nonce (a database read) before calling and consume it after, never
 * inside a transaction around this call: a contract check is an RPC call of up to
 * `timeoutMs`, and SQLite has a single writer.
 */

export interface WalletOwnershipSettings {
  smartWalletRpcUrl: string | null;
  smartWalletRpcTimeoutMs: number;
  smartWalletMaxSignatureBytes: number;
}

export interface OwnershipProof {
  /** The claimed wallet address (0x + 40 hex digits, any case). */
  address: string;
  /** The exact text signed with EIP-191 `personal_sign`. */
  message: string;
  /** 0x-prefixed hex: an EOA signature, or a contract wallet's (ERC-1271 / ERC-6492). */
  signature: string;
  /**
   * The EIP-155 chain the signed text names (a SIWE message's Chain ID). A contract wallet's
   * signature is only meaningful on the chain whose code answers for it, so when given it
   * must be the endpoint's chain for a contract signature; EOA signatures ignore it.
   */
  chainId?: number;
  /** Who should have signed what, for refusals: "the message's address over this exact message". */
  signedBy?: string;
}

/**
 * Characters of the longest wallet signature a request body may carry (its schema's
 * maxLength): 0x and two hex digits per byte of the default cap. An ERC-6492 signature (a
 * factory call and the inner signature) needs far more than an EOA's 132;
 * SMART_WALLET_MAX_SIGNATURE_BYTES can lower the cap, never raise it past this.
 */
export const SIGNATURE_MAX_LENGTH = 2 + 2 * DEFAULT_MAX_SIGNATURE_BYTES;

const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/;
const ERC6492_SUFFIX = '6492'.repeat(16);
const NOT_CONFIGURED = 'smart-wallet (ERC-1271/ERC-6492) verification is not configured on this server';

function invalid(detail: string): AppError {
  return new AppError('invalid_signature', detail);
}

/** Whether a signature has the length of an EOA's (65 bytes, or 64 in EIP-2098 compact form). */
function eoaShaped(signature: string): boolean {
  const bytes = (signature.length - 2) / 2;
  return (bytes === 65 || bytes === 64) && !signature.toLowerCase().endsWith(ERC6492_SUFFIX);
}

export function walletOwnership(settings: WalletOwnershipSettings) {
  const maxSignatureBytes = Math.min(settings.smartWalletMaxSignatureBytes, DEFAULT_MAX_SIGNATURE_BYTES);
  const rpc: SmartWalletRpc | null = settings.smartWalletRpcUrl
    ? { url: settings.smartWalletRpcUrl, timeoutMs: settings.smartWalletRpcTimeoutMs }
    : null;
  // The endpoint's chain never changes under a running process: asked once, on first need.
  // A failed lookup is not kept, so the next contract sign-in asks again.
  let chainIdLookup: Promise<number> | null = null;

  async function lookUpChainId(endpoint: SmartWalletRpc): Promise<number> {
    const client = createRpcClient(endpoint.url, { timeoutMs: endpoint.timeoutMs, retryCount: 0 });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the request timed out')), endpoint.timeoutMs);
    });
    try {
      return await Promise.race([client.getChainId(), deadline]);
    } catch (error) {
      const why = error instanceof Error && error.message === 'the request timed out' ? error.message : rpcFailureReason(error);
      throw new AppError(
        'upstream_unavailable',
        `The Ethereum RPC endpoint ${rpcEndpointName(endpoint.url)} could not tell its chain id to verify the smart-wallet signature: ${why}.`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Refusals of a signature that is not valid, worded for the caller. */
  function refusal(result: Exclude<WalletSignatureResult, { valid: true }>, signature: string, signedBy: string): AppError {
    switch (result.reason) {
      case 'smart_wallet_not_configured':
        return eoaShaped(signature)
          ? invalid(`The signature was not made by ${signedBy} (as an EOA signature), and ${NOT_CONFIGURED}.`)
          : invalid(`The signature is malformed for an EOA signature (65 bytes expected), and ${NOT_CONFIGURED}.`);
      case 'signature_mismatch':
        return invalid(`The signature was not made by ${signedBy}: ${result.detail}`);
      case 'invalid_address':
        return new AppError('invalid_address', result.detail);
      case 'malformed_signature':
        return invalid(`The signature is malformed: ${result.detail}`);
      default:
        return invalid(result.detail);
    }
  }

  /**
   * The checks that cost nothing: 0x-hex of whole bytes, within the cap. Callers run it
   * before their nonce lookup, so oversized input never reaches the database or the node.
   */
  function checkShape(signature: string): void {
    if (typeof signature !== 'string' || signature.length > 2 + 2 * maxSignatureBytes || !HEX_BYTES.test(signature)) {
      throw invalid(`The signature is malformed: send 0x-prefixed hex of 1 to ${maxSignatureBytes} bytes.`);
    }
  }

  /** The chain id of the configured endpoint (cached after the first answer); 502 when it cannot tell. */
  async function rpcChainId(): Promise<number> {
    if (!rpc) throw invalid(`Smart-wallet signatures cannot be checked: ${NOT_CONFIGURED}.`);
    if (!chainIdLookup) {
      const lookup = lookUpChainId(rpc);
      chainIdLookup = lookup;
      lookup.catch(() => {
        if (chainIdLookup === lookup) chainIdLookup = null;
      });
    }
    return chainIdLookup;
  }

  return {
    /** Longest signature, in bytes, that {@link proveWalletOwnership} looks at. */
    maxSignatureBytes,
    /** Whether contract-wallet signatures can be checked here. */
    smartWalletsEnabled: rpc !== null,
    checkShape,
    rpcChainId,

    /**
     * Proves that `address` signed `message`; resolves with the wallet kind, or throws
     * AppError: 400 `invalid_signature` (wrong signer, malformed, contract signature with no
     * endpoint, contract signature for another chain) or 502 `upstream_unavailable`.
     */
    async proveWalletOwnership(proof: OwnershipProof): Promise<{ kind: WalletSignatureKind }> {
      const signedBy = proof.signedBy ?? 'the address over this message';
      checkShape(proof.signature);
      // The local pass: settles every EOA signature without asking the node.
      const local = await verifyWalletSignature({ address: proof.address, message: proof.message, signature: proof.signature, maxSignatureBytes });
      if (local.valid) return { kind: local.kind };
      if (local.reason !== 'smart_wallet_not_configured' || !rpc) throw refusal(local, proof.signature, signedBy);

      if (proof.chainId !== undefined) {
        const chainId = await rpcChainId();
        if (proof.chainId !== chainId) {
          throw new AppError(
            'invalid_signature',
            `The signature is not an EOA signature of the address, and a contract wallet's signature is checked on chain ${chainId} only: ` +
              `the message names Chain ID ${proof.chainId}. Sign a message with Chain ID ${chainId}.`,
          );
        }
      }
      const result = await verifyWalletSignature({ address: proof.address, message: proof.message, signature: proof.signature, maxSignatureBytes, rpc });
      if (result.valid) return { kind: result.kind };
      if (isUpstreamFailure(result.reason)) throw new AppError('upstream_unavailable', `${result.detail} Try again shortly.`);
      throw refusal(result, proof.signature, signedBy);
    },
  };
}

export type WalletOwnership = ReturnType<typeof walletOwnership>;
