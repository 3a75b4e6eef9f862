/**
 * EAS offchain attestations, version 2 (the `Attest` type with `salt`), as eas-sdk 2.x signs and
 * verifies them (`Offchain.signOffchainAttestation`, `verifyOffchainAttestationSignature`): the
 * same EIP-712 domain, types and UID, so eas-sdk, EAS explorers and viem's typed-data verify read
 * ours unmodified. Integers are decimal text in the JSON; the signature covers their values.
 */
import { randomBytes } from 'node:crypto';
import { type Address, encodePacked, getAddress, type Hex, keccak256, stringToHex, zeroAddress, zeroHash } from 'viem';
import { signTypedDataNatively, type RsvSignature } from './typed-signing.js';

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

/**
 * `Offchain.getOffchainUID` of version 2: keccak256 of the packed fields, the schema UID taken as
 * the UTF-8 bytes of its hex text and the attester as the zero address (as eas-sdk does).
 */
export function offchainAttestationUid(message: OffchainAttestationMessage): Hex {
  return keccak256(
    encodePacked(
      ['uint16', 'bytes', 'address', 'address', 'uint64', 'uint64', 'bool', 'bytes32', 'bytes', 'bytes32', 'uint32'],
      [
        message.version,
        stringToHex(message.schema),
        message.recipient,
        zeroAddress,
        BigInt(message.time),
        BigInt(message.expirationTime),
        message.revocable,
        message.refUID,
        message.data,
        message.salt,
        0,
      ],
    ),
  );
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
  const domain = { name: EAS_DOMAIN_NAME, version: input.easVersion, chainId: String(input.chainId), verifyingContract: getAddress(input.eas) };
  const message: OffchainAttestationMessage = {
    version: OFFCHAIN_ATTESTATION_VERSION,
    schema: input.schemaUid.toLowerCase() as Hex,
    recipient: getAddress(input.recipient),
    time: String(input.time),
    expirationTime: input.expirationTime.toString(),
    revocable: input.revocable,
    refUID: zeroHash,
    data: input.data,
    salt: input.salt ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = signTypedDataNatively(privateKey, {
    domain: { ...domain, chainId: BigInt(input.chainId) },
    types: OFFCHAIN_ATTEST_TYPES,
    primaryType: 'Attest',
    message: { ...message, time: BigInt(message.time), expirationTime: input.expirationTime },
  });
  return { domain, primaryType: 'Attest', types: { Attest: OFFCHAIN_ATTEST_TYPES.Attest.map((field) => ({ ...field })) }, message, signature, uid: offchainAttestationUid(message), version: OFFCHAIN_ATTESTATION_VERSION };
}
