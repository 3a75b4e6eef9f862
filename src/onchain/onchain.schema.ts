import { Type } from '@sinclair/typebox';
import { AddressSchema, BodyScorerIdSchema, Integer } from '../http/schemas.js';
import { V2ScoreSchema } from '../scoring/scores/v2-score.schema.js';

const Checksummed = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EIP-55 checksummed address.' });
const Bytes32 = Type.String({ pattern: '^0x[0-9a-f]{64}$' });
const HexBytes = Type.String({ pattern: '^0x([0-9a-f]{2})*$' });
const DecimalInteger = (description: string) => Type.String({ pattern: '^[0-9]+$', description: `${description} (decimal text: it may exceed 2^53).` });

export const ChainIdSchema = Integer({ minimum: 1, maximum: 9_007_199_254_740_991, description: 'Chain id (an integer).', examples: [10] });

export const ChainIdParams = Type.Object({ chain_id: ChainIdSchema });
export const ChainIdQuery = Type.Object({ chain_id: ChainIdSchema });

export const ChainListingSchema = Type.Object(
  {
    chains: Type.Array(
      Type.Object(
        {
          chain_id: Type.Integer(),
          eas: Checksummed,
          schema_registry: Checksummed,
          verifier: Checksummed,
          resolver: Checksummed,
          decoder: Checksummed,
          score_schema: Type.String({ description: 'The EAS schema string of the score attestations.' }),
          score_schema_uid: Bytes32,
          passport_schema: Type.String({ description: 'The EAS schema string of the passport attestations.' }),
          passport_schema_uid: Bytes32,
          signers: Type.Array(
            Type.Object({
              address: Checksummed,
              added_at: Type.String({ description: 'ISO 8601: when the verifier began to accept this signer.' }),
              removed_at: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601: when it stopped; null while trusted.' }),
            }),
            { description: 'Every signer this service has used on the chain: trust an attestation signed by one while it was authorised.' },
          ),
        },
        { title: 'OnchainChain' },
      ),
    ),
  },
  { title: 'OnchainChains' },
);

export const RsvSignatureSchema = Type.Object(
  { v: Type.Integer({ minimum: 27, maximum: 28 }), r: Bytes32, s: Bytes32 },
  { title: 'RsvSignature', description: 'The ECDSA signature split: v 27 or 28, r and s 32 bytes each.' },
);

const TypedField = Type.Object({ name: Type.String(), type: Type.String() });

export const OffchainAttestationSchema = Type.Object(
  {
    domain: Type.Object({
      name: Type.Literal('EAS Attestation'),
      version: Type.String({ description: 'The EAS contract\'s version.' }),
      chainId: DecimalInteger('The chain id'),
      verifyingContract: Checksummed,
    }),
    primaryType: Type.Literal('Attest'),
    types: Type.Object({ Attest: Type.Array(TypedField) }),
    message: Type.Object({
      version: Type.Literal(2),
      schema: Bytes32,
      recipient: Checksummed,
      time: DecimalInteger('Signing time, Unix seconds'),
      expirationTime: DecimalInteger('Unix seconds'),
      revocable: Type.Boolean(),
      refUID: Bytes32,
      data: HexBytes,
      salt: Bytes32,
    }),
    signature: RsvSignatureSchema,
    uid: Bytes32,
    version: Type.Literal(2),
  },
  { title: 'SignedOffchainAttestation', description: 'eas-sdk\'s SignedOffchainAttestation (version 2, with salt), as JSON.' },
);

export const ScoreAttestationSchema = Type.Object(
  {
    attestation: OffchainAttestationSchema,
    signer: Checksummed,
    uid: Bytes32,
  },
  { title: 'ScoreAttestation' },
);

export const AttestationRequestBody = Type.Object(
  { address: AddressSchema, scorer_id: BodyScorerIdSchema },
  { title: 'AttestationRequestBody' },
);

export const AttestationRequestAnswerSchema = Type.Object(
  {
    chain_id: Type.Integer(),
    verifier: Checksummed,
    request: Type.Object({
      recipient: Checksummed,
      attestations: Type.Array(Type.Object({ schema: Bytes32, expirationTime: DecimalInteger('Unix seconds'), data: HexBytes }), {
        description: 'The score attestation, then the passport attestation.',
      }),
      nonce: DecimalInteger('The recipient\'s nonce on the verifier'),
      deadline: DecimalInteger('Unix seconds after which the verifier refuses the request'),
      fee: DecimalInteger('Wei to send with verifyAndAttest'),
    }),
    signature: RsvSignatureSchema,
    score: V2ScoreSchema,
  },
  { title: 'AttestationRequest' },
);

// One object with optional members rather than a union of the two shapes: the response serializer
// writes it without a validator (a union would need one per entry). An entry has either the five
// decoder fields or `error`.
const ChainScoreEntry = Type.Object(
  {
    chain_id: Type.Integer(),
    decoder: Checksummed,
    attested: Type.Optional(Type.Boolean({ description: 'The decoder holds a live score: false when there is none, it expired or it was revoked (then the rest is zero). Absent with `error`.' })),
    score: Type.Optional(Type.String({ description: 'The decoder\'s score (units of 10^-4) as decimal text with 5 fraction digits, as the v2 score. Absent with `error`.', examples: ['20.34560'] })),
    passing: Type.Optional(Type.Boolean({ description: 'Absent with `error`.' })),
    time: Type.Optional(DecimalInteger('The attestation\'s onchain time, Unix seconds; "0" when not attested. Absent with `error`')),
    expiration_time: Type.Optional(DecimalInteger('Unix seconds; "0" when not attested. Absent with `error`')),
    error: Type.Optional(
      Type.Object(
        {
          code: Type.String({
            description: '`upstream_unavailable`: the RPC endpoint is down, slower than OUTBOUND_TIMEOUT_MS or answered garbage; `onchain_not_configured`: the chain has no RPC URL.',
            examples: ['upstream_unavailable', 'onchain_not_configured'],
          }),
          detail: Type.String({ description: 'A sentence for a person.' }),
        },
        { description: 'Why this chain was not read (then the decoder fields are absent); the other chains\' entries are unaffected.' },
      ),
    ),
  },
  { title: 'OnchainChainScore' },
);

export const OnchainScoresSchema = Type.Object(
  {
    address: Type.String({ description: 'The address, lower-case (as the v2 score).' }),
    scorer_id: Type.String(),
    chains: Type.Array(ChainScoreEntry, {
      description: 'One entry per deployed chain, in the deployment file\'s order: the decoder\'s `getScore`, or the `error` that chain gave.',
    }),
  },
  { title: 'OnchainScores' },
);
