/**
 * EAS offchain attestations, version 2 (the `Attest` type with `salt`), as eas-sdk 2.x signs and
 * verifies them (`Offchain.signOffchainAttestation`, `verifyOffchainAttestationSignature`): the
 * same EIP-712 domain, types and UID, so eas-sdk, EAS explorers and viem's typed-data verify read
 * ours unmodified. Integers are decimal text in the JSON; the signature covers their values.
 */
import { randomFillSync } from 'node:crypto';
import { type Address, type Hex, zeroHash } from 'viem';
import { bytesHex, checksumAddress, hexBytes, WORD, writeAddressWord, writeUint } from '../chain/abi-words.js';
import { keccak256Bytes } from '../chain/keccak.js';
import { type RsvSignature, signDigest, typedDataDigest, typeHashBytes } from './typed-signing.js';

export const OFFCHAIN_ATTESTATION_VERSION = 2 as const;
export const EAS_DOMAIN_NAME = 'EAS Attestation' as const;

export const OFFCHAIN_ATTEST_TYPES = {
  Attest: [
    { name: 'version', type: 'uint16' },
    { name: 'schema', type: 'bytes32' },
    { name: 'recipient', type: 'address' },
    { name: 'time', type: 'uint64' },
    { name: 'expirationTime', type: 'uint64' },
    { name: 'revocable', type: 'bool' },
    { name: 'refUID', type: 'bytes32' },
    { name: 'data', type: 'bytes' },
    { name: 'salt', type: 'bytes32' },
  ],
} as const;

export interface OffchainAttestationMessage {
  version: typeof OFFCHAIN_ATTESTATION_VERSION;
  schema: Hex;
  recipient: Address;
  time: string;
  expirationTime: string;
  revocable: boolean;
  refUID: Hex;
  data: Hex;
  salt: Hex;
}

/** eas-sdk's `SignedOffchainAttestation`, as JSON. */
export interface SignedOffchainAttestation {
  domain: { name: typeof EAS_DOMAIN_NAME; version: string; chainId: string; verifyingContract: Address };
  primaryType: 'Attest';
  types: { Attest: { name: string; type: string }[] };
  message: OffchainAttestationMessage;
  signature: RsvSignature;
  uid: Hex;
  version: typeof OFFCHAIN_ATTESTATION_VERSION;
}

const ATTEST_TYPE_HASH = typeHashBytes('Attest', OFFCHAIN_ATTEST_TYPES);

// Packed field widths of the UID, in eas-sdk's order (the schema is its 66 characters of hex text).
const SCHEMA_TEXT_BYTES = 66;
const UID_HEAD_BYTES = 2 + SCHEMA_TEXT_BYTES + 20 + 20 + 8 + 8 + 1 + WORD;
const UID_TAIL_BYTES = WORD + 4;

/**
 * `Offchain.getOffchainUID` of version 2: keccak256 of the packed fields, the schema UID taken as
 * the UTF-8 bytes of its hex text and the attester as the zero address (as eas-sdk does).
 * `dataBytes`: `message.data` already decoded, when the caller has it.
 */
export function offchainAttestationUid(message: OffchainAttestationMessage, dataBytes: Uint8Array = hexBytes(message.data)): Hex {
  if (!/^0x[0-9a-fA-F]{64}$/.test(message.schema)) throw new RangeError('schema is not a 32-byte UID');
  const packed = new Uint8Array(UID_HEAD_BYTES + dataBytes.length + UID_TAIL_BYTES);
  writeUint(packed, 2, message.version, 2);
  packed.set(Buffer.from(message.schema, 'latin1'), 2);
  packed.set(hexBytes(message.recipient, 20), 2 + SCHEMA_TEXT_BYTES);
  // the attester: 20 zero bytes
  writeUint(packed, 2 + SCHEMA_TEXT_BYTES + 48, BigInt(message.time), 8);
  writeUint(packed, 2 + SCHEMA_TEXT_BYTES + 56, BigInt(message.expirationTime), 8);
  packed[2 + SCHEMA_TEXT_BYTES + 56] = message.revocable ? 1 : 0;
  packed.set(hexBytes(message.refUID, WORD), UID_HEAD_BYTES - WORD);
  packed.set(dataBytes, UID_HEAD_BYTES);
  packed.set(hexBytes(message.salt, WORD), UID_HEAD_BYTES + dataBytes.length);
  // the trailing uint32 0: four zero bytes
  return bytesHex(keccak256Bytes(packed));
}

/** hashStruct of the `Attest` message: its type hash and its nine fields, `data` as its keccak256. */
function attestStructHash(message: OffchainAttestationMessage, dataBytes: Uint8Array): Uint8Array {
  const words = new Uint8Array(10 * WORD);
  words.set(ATTEST_TYPE_HASH, 0);
  writeUint(words, 2 * WORD, message.version, 2);
  words.set(hexBytes(message.schema, WORD), 2 * WORD);
  writeAddressWord(words, 3 * WORD, message.recipient);
  writeUint(words, 5 * WORD, BigInt(message.time), 8);
  writeUint(words, 6 * WORD, BigInt(message.expirationTime), 8);
  words[7 * WORD - 1] = message.revocable ? 1 : 0;
  words.set(hexBytes(message.refUID, WORD), 7 * WORD);
  words.set(keccak256Bytes(dataBytes), 8 * WORD);
  words.set(hexBytes(message.salt, WORD), 9 * WORD);
  return keccak256Bytes(words);
}

// Salts are cut from a pool refilled from the CSPRNG: one call per 128 salts instead of one each.
const SALT_POOL = Buffer.alloc(128 * WORD);
let saltsLeft = 0;

function randomSalt(): Hex {
  if (saltsLeft === 0) {
    randomFillSync(SALT_POOL);
    saltsLeft = SALT_POOL.length / WORD;
  }
  saltsLeft -= 1;
  const start = saltsLeft * WORD;
  const salt = SALT_POOL.toString('hex', start, start + WORD);
  SALT_POOL.fill(0, start, start + WORD);
  return `0x${salt}`;
}

export interface OffchainAttestationInput {
  chainId: number;
  eas: Address;
  easVersion: string;
  schemaUid: Hex;
  recipient: Address;
  data: Hex;
  /** Unix seconds. */
  time: number;
  expirationTime: bigint;
  revocable: boolean;
  /** 32 random bytes unless given (tests). */
  salt?: Hex;
}

export function signOffchainAttestation(privateKey: Hex, input: OffchainAttestationInput): SignedOffchainAttestation {
  const domain = { name: EAS_DOMAIN_NAME, version: input.easVersion, chainId: String(input.chainId), verifyingContract: checksumAddress(input.eas) };
  const message: OffchainAttestationMessage = {
    version: OFFCHAIN_ATTESTATION_VERSION,
    schema: input.schemaUid.toLowerCase() as Hex,
    recipient: checksumAddress(input.recipient),
    time: String(input.time),
    expirationTime: input.expirationTime.toString(),
    revocable: input.revocable,
    refUID: zeroHash,
    data: input.data,
    salt: input.salt ?? randomSalt(),
  };
  const dataBytes = hexBytes(input.data);
  const digest = typedDataDigest({ ...domain, chainId: input.chainId }, attestStructHash(message, dataBytes));
  return {
    domain,
    primaryType: 'Attest',
    types: { Attest: OFFCHAIN_ATTEST_TYPES.Attest.map((field) => ({ ...field })) },
    message,
    signature: signDigest(privateKey, digest),
    uid: offchainAttestationUid(message, dataBytes),
    version: OFFCHAIN_ATTESTATION_VERSION,
  };
}
