/**
 * EIP-712 signing of the two fixed types this service signs (EAS's offchain `Attest` and the
 * verifier's `AttestationRequest`). Their type hashes are computed once where the types are
 * defined and a domain separator once per domain, so a signature costs the struct's own words,
 * the WebAssembly keccak and the native libsecp256k1 signing (RFC 6979, low s): about a tenth of
 * viem's generic `hashTypedData`, which re-derives all of it on every call. Tests check every
 * digest against viem's.
 */
import { type Hex } from 'viem';
import { hexBytes, WORD, writeAddressWord, writeUint } from '../chain/abi-words.js';
import { hashType, type TypedDataTypes } from '../chain/eip712.js';
import { keccak256Bytes } from '../chain/keccak.js';
import { signHashBytes } from '../chain/signatures.js';

/** An ECDSA signature split as EAS and the verifier take it: v 27/28, r and s 32 bytes each. */
export interface RsvSignature {
  v: number;
  r: Hex;
  s: Hex;
}

/** The domain both types are signed in: name, version, chainId, verifyingContract (in that order, as viem and eas-sdk build it). */
export interface SigningDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

const DOMAIN_TYPE_HASH = hexBytes(
  hashType('EIP712Domain', {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
  }),
);

const separators = new Map<string, Uint8Array>();
const SEPARATORS_KEPT = 256;

export function domainSeparator(domain: SigningDomain): Uint8Array {
  const key = `${domain.name}\n${domain.version}\n${domain.chainId}\n${domain.verifyingContract.toLowerCase()}`;
  let separator = separators.get(key);
  if (separator === undefined) {
    const words = new Uint8Array(5 * WORD);
    words.set(DOMAIN_TYPE_HASH, 0);
    words.set(keccak256Bytes(Buffer.from(domain.name, 'utf8')), WORD);
    words.set(keccak256Bytes(Buffer.from(domain.version, 'utf8')), 2 * WORD);
    writeUint(words, 4 * WORD, domain.chainId);
    writeAddressWord(words, 4 * WORD, domain.verifyingContract);
    separator = keccak256Bytes(words);
    if (separators.size >= SEPARATORS_KEPT) separators.clear();
    separators.set(key, separator);
  }
  return separator;
}

/** keccak256 of the type string of `primaryType` (with the structs it references), as bytes. */
export function typeHashBytes(primaryType: string, types: TypedDataTypes): Uint8Array {
  return hexBytes(hashType(primaryType, types));
}

/** The signed digest: keccak256(0x19 0x01 ‖ domainSeparator ‖ structHash). */
export function typedDataDigest(domain: SigningDomain, structHash: Uint8Array): Uint8Array {
  const encoded = new Uint8Array(2 + 2 * WORD);
  encoded[0] = 0x19;
  encoded[1] = 0x01;
  encoded.set(domainSeparator(domain), 2);
  encoded.set(structHash, 2 + WORD);
  return keccak256Bytes(encoded);
}

export function signDigest(privateKey: Hex, digest: Uint8Array): RsvSignature {
  const signature = signHashBytes(privateKey, digest);
  const hex = Buffer.from(signature.buffer, signature.byteOffset, 64).toString('hex');
  return { r: `0x${hex.slice(0, 64)}`, s: `0x${hex.slice(64, 128)}`, v: signature[64] as number };
}
