/**
 * The verifier's `AttestationRequest`, built and signed (pure: no I/O, no clock): the score and
 * passport attestations of one recipient, its nonce, deadline and fee, as EIP-712 typed data in
 * the verifier's domain. The struct is encoded by hand for the one layout the verifier declares
 * (contracts/abi/verifier-eip712.json, checked below); tests compare the digest with viem's.
 */
import { type Address, type Hex } from 'viem';
import { checksumAddress, hexBytes, WORD, writeAddressWord, writeUint } from '../chain/abi-words.js';
import { keccak256Bytes } from '../chain/keccak.js';
import { verifierTypes } from './interface-files.js';
import { type RsvSignature, signDigest, typedDataDigest, typeHashBytes } from './typed-signing.js';

export interface RequestAttestation {
  schema: Hex;
  expirationTime: bigint;
  data: Hex;
}

export interface AttestationRequestMessage {
  recipient: Address;
  attestations: readonly RequestAttestation[];
  nonce: bigint;
  deadline: bigint;
  fee: bigint;
}

const layout = (fields: readonly { name: string; type: string }[]) => fields.map((field) => `${field.type} ${field.name}`).join(',');
if (
  layout(verifierTypes.types.AttestationRequest) !== 'address recipient,AttestationData[] attestations,uint256 nonce,uint64 deadline,uint256 fee' ||
  layout(verifierTypes.types.AttestationData) !== 'bytes32 schema,uint64 expirationTime,bytes data'
) {
  throw new Error('contracts/abi/verifier-eip712.json changed: update the encoder of attestation-request.ts');
}

const REQUEST_TYPE_HASH = typeHashBytes('AttestationRequest', verifierTypes.types);
const DATA_TYPE_HASH = typeHashBytes('AttestationData', verifierTypes.types);

function attestationDataHash(attestation: RequestAttestation): Uint8Array {
  const words = new Uint8Array(4 * WORD);
  words.set(DATA_TYPE_HASH, 0);
  words.set(hexBytes(attestation.schema, WORD), WORD);
  writeUint(words, 3 * WORD, attestation.expirationTime, 8);
  words.set(keccak256Bytes(hexBytes(attestation.data)), 3 * WORD);
  return keccak256Bytes(words);
}

/** hashStruct of the request: the attestations as the keccak256 of their struct hashes, concatenated. */
export function requestStructHash(message: AttestationRequestMessage): Uint8Array {
  const attestationHashes = new Uint8Array(message.attestations.length * WORD);
  message.attestations.forEach((attestation, index) => attestationHashes.set(attestationDataHash(attestation), index * WORD));
  const words = new Uint8Array(6 * WORD);
  words.set(REQUEST_TYPE_HASH, 0);
  writeAddressWord(words, WORD, message.recipient);
  words.set(keccak256Bytes(attestationHashes), 2 * WORD);
  writeUint(words, 4 * WORD, message.nonce);
  writeUint(words, 5 * WORD, message.deadline, 8);
  writeUint(words, 6 * WORD, message.fee);
  return keccak256Bytes(words);
}

/** The request's signature by the signer key, for `verifyAndAttest(request, v, r, s)` on `verifier` of `chainId`. */
export function signAttestationRequest(privateKey: Hex, chainId: number, verifier: Address, message: AttestationRequestMessage): RsvSignature {
  const domain = { ...verifierTypes.domain, chainId, verifyingContract: checksumAddress(verifier) };
  return signDigest(privateKey, typedDataDigest(domain, requestStructHash(message)));
}
