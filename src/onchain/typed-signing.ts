import { hashTypedData, type Hex, type TypedDataDefinition } from 'viem';
import { signHash } from '../chain/signatures.js';

/** An ECDSA signature split as EAS and the verifier take it: v 27/28, r and s 32 bytes each. */
export interface RsvSignature {
  v: number;
  r: Hex;
  s: Hex;
}

/**
 * Signs EIP-712 typed data: viem hashes it (its encoder accepts the domain and struct types EAS
 * and the verifier use), and the native libsecp256k1 binding signs the digest (RFC 6979, low s),
 * a small fraction of a millisecond where a pure-JavaScript signer costs several.
 */
export function signTypedDataNatively(privateKey: Hex, definition: TypedDataDefinition): RsvSignature {
  const signature = signHash(privateKey, hashTypedData(definition));
  return { r: `0x${signature.slice(2, 66)}`, s: `0x${signature.slice(66, 130)}`, v: Number.parseInt(signature.slice(130, 132), 16) };
}
