import { Type } from '@sinclair/typebox';
import { AddressSchema } from '../../http/schemas.js';
import { SIGNATURE_MAX_LENGTH } from '../../chain/wallet-ownership.js';

/** Request and response schemas of the wallet routes. */

export const Timestamp = (description: string) => Type.String({ description: `${description} ISO 8601 with a +00:00 offset.` });

export const SiweNonce = Type.Object(
  {
    nonce: Type.String({ description: 'Random, single-use value for the message\'s Nonce line.' }),
    domain: Type.String({ description: 'What the message\'s domain must be: this service\'s host (and port).' }),
    uri: Type.String({ description: 'A URI for the message; any URI that starts with this service\'s origin, as written here, is accepted (no user information).' }),
    chainId: Type.Integer({ description: 'Chain ID for the message: the first of SIWE_ALLOWED_CHAIN_IDS (others of that list are accepted too).' }),
    statement: Type.String({ description: 'Suggested statement (optional in the message, not checked).' }),
    expiresAt: Timestamp('When the nonce stops being usable; a good Expiration Time for the message.'),
  },
  { title: 'SiweNonce' },
);

export const SignInBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 8192, description: 'The EIP-4361 message exactly as signed.' }),
    signature: Type.String({
      maxLength: SIGNATURE_MAX_LENGTH,
      description:
        'EIP-191 personal_sign signature of the message by its address, 0x-hex: an EOA signature, or a contract wallet\'s ' +
        '(ERC-1271, ERC-6492) when SMART_WALLET_RPC_URL is configured.',
    }),
  },
  { title: 'WalletSignIn' },
);

export const WalletSessionBody = Type.Object(
  {
    token: Type.String({ description: 'Session token, shown once: send it as `Authorization: Bearer <token>`.' }),
    address: { ...AddressSchema, description: 'The signed-in address, lower-case.' },
    expiresAt: Timestamp('When the session ends (WALLET_SESSION_TTL_SECONDS after sign-in).'),
  },
  { title: 'WalletSession' },
);

export const Credential = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'A stamp: a W3C verifiable credential with an EthereumEip712Signature2021 proof, whose subject is ' +
      '`did:pkh:eip155:1:<the signed-in address>`.',
  },
);

/** The bodies that carry credentials or providers, sized by MAX_STAMPS_PER_REQUEST. */
export function stampBodies(maxStamps: number) {
  const credentialsOf = (minItems: number, description: string) =>
    Type.Object(
      { credentials: Type.Array(Credential, { minItems, maxItems: maxStamps, description }) },
      { title: minItems === 0 ? 'WalletStampSet' : 'WalletCredentials' },
    );
  return {
    add: credentialsOf(1, `1 to ${maxStamps} credentials.`),
    replace: credentialsOf(0, `0 to ${maxStamps} credentials: the new set of live stamps.`),
    providers: Type.Object(
      {
        // No control characters: PostgreSQL text cannot hold NUL, and no provider name has any.
        providers: Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }), {
          minItems: 1,
          maxItems: maxStamps,
          description: 'Providers (e.g. `Google`) whose stamps to delete.',
        }),
      },
      { title: 'WalletStampDeletion' },
    ),
  };
}

export const CredentialResult = Type.Object(
  {
    index: Type.Integer({ description: 'Position of the credential in `credentials`.' }),
    status: Type.Union([Type.Literal('stored'), Type.Literal('unchanged'), Type.Literal('rejected')], {
      description: '`stored` (new or restored), `unchanged` (already a live stamp) or `rejected`.',
    }),
    provider: Type.Optional(Type.String({ description: 'The credential\'s provider, when it could be read.' })),
    reason: Type.Optional(Type.String({ description: 'Why a credential was rejected.' })),
  },
  { title: 'WalletCredentialResult' },
);

export const WriteReport = Type.Object(
  {
    stored: Type.Integer(),
    unchanged: Type.Integer(),
    rejected: Type.Integer(),
    deleted: Type.Integer({ description: 'Stamps soft-deleted by this request (replacements only).' }),
    results: Type.Array(CredentialResult, { description: 'One entry per credential, in request order.' }),
  },
  { title: 'WalletWriteReport' },
);

export const WalletStamp = Type.Object(
  {
    provider: Type.String(),
    issuer: Type.String({ description: 'Issuer DID.' }),
    digest: Type.String({ description: 'SHA-256 of the credential\'s canonical JSON: the stamp\'s identity.' }),
    issuanceDate: Timestamp('Issuance date of the credential.'),
    expirationDate: Timestamp('Expiration date of the credential.'),
    addedAt: Timestamp('When the stamp was (last) added.'),
    credential: Type.Object({}, { additionalProperties: true, description: 'The stored credential, unchanged.' }),
  },
  { title: 'WalletStamp' },
);

export const WalletStamps = Type.Object(
  { address: { ...AddressSchema, description: 'The signed-in address.' }, items: Type.Array(WalletStamp) },
  { title: 'WalletStamps' },
);

export const Deleted = Type.Object({ deleted: Type.Integer({ description: 'How many live stamps were soft-deleted.' }) }, { title: 'WalletStampsDeleted' });
