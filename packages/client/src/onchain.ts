/**
 * Checking Stampgate's scores without calling Stampgate: an EAS offchain score attestation verified
 * offline against the signers you trust, and the score a chain's decoder contract holds.
 */
import {
  type Address,
  createPublicClient,
  decodeAbiParameters,
  encodePacked,
  getAddress,
  type Hex,
  http,
  isAddressEqual,
  keccak256,
  parseAbiParameters,
  recoverTypedDataAddress,
  stringToHex,
  zeroAddress,
} from 'viem';

/** The score schema of Stampgate's EAS attestations (`contracts/abi/schemas.json`). */
export const SCORE_SCHEMA = 'bool passing_score, uint8 score_decimals, uint128 scorer_id, uint32 score, uint32 threshold, (string provider, uint256 score)[] stamps';
/** The passport schema. */
export const PASSPORT_SCHEMA = '(string provider, bytes32 hash, uint64 issuance_date, uint64 expiration_date)[] stamps';

/** The verifier's EIP-712 request type (`contracts/abi/verifier-eip712.json`): what `POST /v2/onchain/{chain_id}/attestations` signs. */
export const VERIFIER_EIP712 = {
  domain: { name: 'Stampgate Verifier', version: '1' },
  primaryType: 'AttestationRequest',
  types: {
    AttestationRequest: [
      { name: 'recipient', type: 'address' },
      { name: 'attestations', type: 'AttestationData[]' },
      { name: 'nonce', type: 'uint256' },
      { name: 'deadline', type: 'uint64' },
      { name: 'fee', type: 'uint256' },
    ],
    AttestationData: [
      { name: 'schema', type: 'bytes32' },
      { name: 'expirationTime', type: 'uint64' },
      { name: 'data', type: 'bytes' },
    ],
  },
} as const;

const ATTEST_TYPES = {
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

/** eas-sdk's SignedOffchainAttestation (version 2) as the service answers it: integers as decimal text. */
export interface OffchainScoreAttestation {
  /** EIP-712 domain: "EAS Attestation", the EAS version, the chain id and the EAS contract. */
  domain: { name: string; version: string; chainId: string | number; verifyingContract: string };
  /** Always "Attest". */
  primaryType: string;
  /** EAS's version-2 `Attest` type. */
  types: Record<string, readonly { name: string; type: string }[]>;
  /** The signed fields; `data` is the score schema's encoding. */
  message: {
    version: number;
    schema: string;
    recipient: string;
    time: string | number;
    expirationTime: string | number;
    revocable: boolean;
    refUID: string;
    data: string;
    salt: string;
  };
  /** The signature split: v 27 or 28, r and s. */
  signature: { v: number; r: string; s: string };
  /** The offchain UID, as eas-sdk's `Offchain.getOffchainUID` computes it. */
  uid: string;
  /** The offchain attestation version: 2. */
  version: number;
}

/** A signer to trust: an address, or an entry of `GET /v2/onchain/chains` (trusted only while it was authorised). */
export type TrustedSigner = string | { address: string; added_at?: string; removed_at?: string | null };

/** What a verified score attestation says. */
export interface VerifiedScore {
  /** The trusted signer that signed it. */
  signer: Address;
  /** Its offchain UID. */
  uid: Hex;
  /** The chain of its EAS domain. */
  chainId: number;
  /** The scored wallet. */
  recipient: Address;
  /** Unix seconds it was signed. */
  time: bigint;
  /** Unix seconds it expires (0: never). */
  expirationTime: bigint;
  /** score ≥ threshold. */
  passing_score: boolean;
  /** Fraction digits of `score`, `threshold` and the stamp scores: 4. */
  score_decimals: number;
  /** The scorer. */
  scorer_id: bigint;
  /** The score × 10^score_decimals. */
  score: number;
  /** The scorer's threshold × 10^score_decimals. */
  threshold: number;
  /** The stamps that counted, each with its score × 10^score_decimals. */
  stamps: { provider: string; score: bigint }[];
}

/** Thrown by `verifyScoreAttestation` when an attestation must not be trusted; the message says why. */
export class AttestationVerificationError extends Error {
  /** "AttestationVerificationError". */
  override readonly name = 'AttestationVerificationError';
}

function fail(reason: string): never {
  throw new AttestationVerificationError(reason);
}

/** eas-sdk's `Offchain.getOffchainUID` for version 2. */
export function offchainAttestationUid(message: OffchainScoreAttestation['message']): Hex {
  return keccak256(
    encodePacked(
      ['uint16', 'bytes', 'address', 'address', 'uint64', 'uint64', 'bool', 'bytes32', 'bytes', 'bytes32', 'uint32'],
      [
        message.version,
        stringToHex(message.schema),
        getAddress(message.recipient),
        zeroAddress,
        BigInt(message.time),
        BigInt(message.expirationTime),
        message.revocable,
        message.refUID as Hex,
        message.data as Hex,
        message.salt as Hex,
        0,
      ],
    ),
  );
}

function trustedAt(signers: readonly TrustedSigner[], signer: Address, time: bigint): boolean {
  const seconds = (iso: string | null | undefined) => (iso ? BigInt(Math.floor(Date.parse(iso) / 1000)) : null);
  return signers.some((entry) => {
    const item = typeof entry === 'string' ? { address: entry } : entry;
    if (!isAddressEqual(getAddress(item.address), signer)) return false;
    const added = 'added_at' in item ? seconds(item.added_at) : null;
    const removed = 'removed_at' in item ? seconds(item.removed_at) : null;
    return (added === null || time >= added) && (removed === null || time < removed);
  });
}

/**
 * Verifies a score attestation offline: the EAS offchain format (version 2), the UID, the
 * signature of one of `trustedSigners` (at the attestation's time), and that it has not expired
 * (at `now`, epoch ms). Returns the decoded score fields; throws `AttestationVerificationError`.
 */
export async function verifyScoreAttestation(
  attestation: OffchainScoreAttestation,
  trustedSigners: readonly TrustedSigner[],
  options: { now?: number } = {},
): Promise<VerifiedScore> {
  const { domain, message } = attestation;
  if (attestation.version !== 2 || message.version !== 2 || attestation.primaryType !== 'Attest') fail('not a version-2 EAS offchain attestation');
  if (domain.name !== 'EAS Attestation') fail('the domain is not EAS Attestation');
  if (JSON.stringify(attestation.types) !== JSON.stringify(ATTEST_TYPES)) fail('the types are not EAS\'s version-2 Attest type');
  const uid = offchainAttestationUid(message);
  if (uid !== attestation.uid.toLowerCase()) fail('the UID does not match the attestation');
  const typedMessage = { ...message, recipient: getAddress(message.recipient), time: BigInt(message.time), expirationTime: BigInt(message.expirationTime) } as never;
  const { v, r, s } = attestation.signature;
  const signature = `${r}${s.slice(2)}${v.toString(16).padStart(2, '0')}` as Hex;
  let signer: Address;
  try {
    signer = await recoverTypedDataAddress({
      domain: { name: domain.name, version: domain.version, chainId: BigInt(domain.chainId), verifyingContract: getAddress(domain.verifyingContract) },
      types: ATTEST_TYPES,
      primaryType: 'Attest',
      message: typedMessage,
      signature,
    });
  } catch {
    fail('the signature is malformed');
  }
  const time = BigInt(message.time);
  if (!trustedAt(trustedSigners, signer, time)) fail(`signed by ${signer}, not a trusted signer at the attestation's time`);
  const expirationTime = BigInt(message.expirationTime);
  const nowSeconds = BigInt(Math.floor((options.now ?? Date.now()) / 1000));
  if (expirationTime !== 0n && expirationTime <= nowSeconds) fail('the attestation has expired');
  let fields: readonly unknown[];
  try {
    fields = decodeAbiParameters(parseAbiParameters(SCORE_SCHEMA), message.data as Hex);
  } catch {
    fail('the data is not of the score schema');
  }
  const [passing, decimals, scorerId, score, threshold, stamps] = fields as [boolean, number, bigint, number, number, readonly { provider: string; score: bigint }[]];
  return {
    signer,
    uid,
    chainId: Number(domain.chainId),
    recipient: getAddress(message.recipient),
    time,
    expirationTime,
    passing_score: passing,
    score_decimals: decimals,
    scorer_id: scorerId,
    score,
    threshold,
    stamps: stamps.map((stamp) => ({ provider: stamp.provider, score: stamp.score })),
  };
}

const decoderAbi = [
  {
    type: 'function',
    name: 'getScore',
    stateMutability: 'view',
    inputs: [
      { name: 'scorerId', type: 'uint256' },
      { name: 'user', type: 'address' },
    ],
    outputs: [
      { name: 'score', type: 'uint256' },
      { name: 'passing', type: 'bool' },
      { name: 'time', type: 'uint64' },
      { name: 'expirationTime', type: 'uint64' },
    ],
  },
] as const;

/** The decoder's `getScore` answer; all zero when there is none, it expired or it was revoked. */
export interface OnchainScore {
  /** The score × 10⁴. */
  score: bigint;
  /** Passing, unexpired, unrevoked. */
  passing: boolean;
  /** Unix seconds the attestation was made onchain. */
  time: bigint;
  /** Unix seconds it expires. */
  expirationTime: bigint;
}

/** The score a chain holds for `address`, read from Stampgate's decoder contract (`getScore`), never from Stampgate. */
export async function readOnchainScore(options: { rpcUrl: string; decoder: string; scorerId: number | bigint; address: string }): Promise<OnchainScore> {
  const client = createPublicClient({ transport: http(options.rpcUrl) });
  const [score, passing, time, expirationTime] = await client.readContract({
    address: getAddress(options.decoder),
    abi: decoderAbi,
    functionName: 'getScore',
    args: [BigInt(options.scorerId), getAddress(options.address)],
  });
  return { score, passing, time, expirationTime };
}
