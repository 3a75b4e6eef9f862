import secp256k1 from 'secp256k1';
import { bytesToHex, hashMessage, keccak256, toBytes, type Address, type Hex } from 'viem';

/**
 * secp256k1 signatures with Ethereum conventions, on the native libsecp256k1 binding:
 * recovery there costs about a twentieth of a pure-JavaScript recovery, and every stamp
 * submitted for scoring needs one.
 */

export type SignatureErrorCode =
  | 'malformed_hash'
  | 'malformed_message'
  | 'malformed_signature'
  | 'invalid_recovery_id'
  | 'non_canonical_signature'
  | 'unrecoverable_signature'
  | 'malformed_private_key';

export class SignatureError extends Error {
  override readonly name = 'SignatureError';
  constructor(
    readonly code: SignatureErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const HASH_BYTES = 32;
const SIGNATURE_BYTES = 65;
const HASH_HEX = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE_HEX = /^0x[0-9a-fA-F]{130}$/;
const PRIVATE_KEY_HEX = /^0x[0-9a-fA-F]{64}$/;

// Half the curve order. Signers that follow current practice (libsecp256k1, k256 as used by
// didkit, noble, ethers) only emit s at or below it; accepting the mirrored high-s form
// would give every proof a second valid encoding, and with it a second credential digest.
const HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

function hashBytes(hash: Uint8Array | Hex): Uint8Array {
  if (hash instanceof Uint8Array) {
    if (hash.length !== HASH_BYTES) throw new SignatureError('malformed_hash', 'hash must be 32 bytes');
    return hash;
  }
  if (typeof hash !== 'string' || !HASH_HEX.test(hash)) {
    throw new SignatureError('malformed_hash', 'hash must be 32 bytes of 0x-prefixed hex');
  }
  return toBytes(hash);
}

function signatureBytes(signature: Hex | Uint8Array): Uint8Array {
  if (signature instanceof Uint8Array) {
    if (signature.length !== SIGNATURE_BYTES) {
      throw new SignatureError('malformed_signature', 'signature must be 65 bytes (r, s, v)');
    }
    return signature;
  }
  if (typeof signature !== 'string' || !SIGNATURE_HEX.test(signature)) {
    throw new SignatureError('malformed_signature', 'signature must be 65 bytes (r, s, v) of 0x-prefixed hex');
  }
  return toBytes(signature);
}

function bigintOf(bytes: Uint8Array): bigint {
  return BigInt(bytesToHex(bytes));
}

/** Lower-case 0x address of an uncompressed (65-byte, 0x04-prefixed) public key. */
export function addressFromPublicKey(uncompressedPublicKey: Uint8Array): Address {
  const digest = keccak256(uncompressedPublicKey.subarray(1), 'bytes');
  return bytesToHex(digest.subarray(12)) as Address;
}

/**
 * The address whose key produced `signature` over the 32-byte `hash`. The recovery id may be
 * given as 27/28 or 0/1. Throws only `SignatureError`.
 */
export function recoverAddressFromHash(hash: Uint8Array | Hex, signature: Hex | Uint8Array): Address {
  const digest = hashBytes(hash);
  const bytes = signatureBytes(signature);
  const v = bytes[64] as number;
  const recoveryId = v >= 27 ? v - 27 : v;
  if (recoveryId !== 0 && recoveryId !== 1) {
    throw new SignatureError('invalid_recovery_id', `signature recovery byte ${v} is not 27, 28, 0 or 1`);
  }
  const compact = bytes.subarray(0, 64);
  if (bigintOf(compact.subarray(32)) > HALF_CURVE_ORDER) {
    throw new SignatureError('non_canonical_signature', 'signature s value is in the upper half of the curve order');
  }
  let publicKey: Uint8Array;
  try {
    publicKey = secp256k1.ecdsaRecover(compact, recoveryId, digest, false);
  } catch {
    throw new SignatureError('unrecoverable_signature', 'no public key can be recovered from this signature');
  }
  return addressFromPublicKey(publicKey);
}

/** The signer of an EIP-191 `personal_sign` signature over the UTF-8 `message`. */
export function recoverPersonalSignAddress(message: string, signature: Hex | Uint8Array): Address {
  if (typeof message !== 'string') throw new SignatureError('malformed_message', 'message must be a string');
  return recoverAddressFromHash(hashMessage(message, 'bytes'), signature);
}

function privateKeyBytes(privateKey: Hex): Uint8Array {
  if (typeof privateKey !== 'string' || !PRIVATE_KEY_HEX.test(privateKey)) {
    throw new SignatureError('malformed_private_key', 'private key must be 32 bytes of 0x-prefixed hex');
  }
  const bytes = toBytes(privateKey);
  if (!secp256k1.privateKeyVerify(bytes)) {
    throw new SignatureError('malformed_private_key', 'private key is outside the secp256k1 range');
  }
  return bytes;
}

/** Lower-case 0x address of a private key. */
export function addressFromPrivateKey(privateKey: Hex): Address {
  return addressFromPublicKey(secp256k1.publicKeyCreate(privateKeyBytes(privateKey), false));
}

// The last key validated: a signer signs with one key many times a second, and checking it
// (range, parse) costs more than the native signing itself.
let lastKey: { hex: Hex; bytes: Uint8Array } | null = null;

function validatedKey(privateKey: Hex): Uint8Array {
  if (lastKey?.hex !== privateKey) lastKey = { hex: privateKey, bytes: privateKeyBytes(privateKey) };
  return lastKey.bytes;
}

/** As `signHash`, as the 65 bytes r‖s‖v (v 27/28). */
export function signHashBytes(privateKey: Hex, hash: Uint8Array | Hex): Uint8Array {
  const { signature, recid } = secp256k1.ecdsaSign(hashBytes(hash), validatedKey(privateKey));
  const serialized = new Uint8Array(SIGNATURE_BYTES);
  serialized.set(signature, 0);
  serialized[64] = 27 + recid;
  return serialized;
}

/**
 * A deterministic (RFC 6979), low-s signature over the 32-byte `hash`, as 0x r‖s‖v with v 27/28:
 * the form Ethereum tooling and EthereumEip712Signature2021 proofs use.
 */
export function signHash(privateKey: Hex, hash: Uint8Array | Hex): Hex {
  return bytesToHex(signHashBytes(privateKey, hash));
}
