import { Type } from '@sinclair/typebox';
import { SIGNATURE_MAX_LENGTH } from '../chain/wallet-ownership.js';
import { AddressSchema, Integer } from '../http/schemas.js';
import { SiweNonce } from '../scoring/wallet/wallet.schema.js';
import { PermissionListSchema } from '../scoring/accounts/permissions.schema.js';

/** Request and response schemas of the account-management routes (`/v2/account/…`, tag `account`). */

const Timestamp = (description: string) => Type.String({ description: `${description} ISO 8601 with a +00:00 offset.` });
const Decimal = (description: string) => Type.String({ pattern: '^\\d{1,12}(\\.\\d{1,5})?$', description: `${description} A non-negative decimal, as text.` });
// No control characters: PostgreSQL text cannot hold NUL, and no name needs one.
const Printable = '^[^\\u0000-\\u001f\\u007f]+$';
const Provider = Type.String({ minLength: 1, maxLength: 100, pattern: Printable });
const Weights = Type.Record(Provider, Decimal('Weight.'), {
  maxProperties: 500,
  description: 'Weight overrides: provider → weight (other providers keep the catalogue\'s weight).',
});

export const AccountBody = Type.Object(
  {
    id: Type.String({ description: 'Account id.' }),
    name: Type.String(),
    owner_address: Type.Union([AddressSchema, Type.Null()], { description: 'Wallet that owns the account (portal sign-in), or null.' }),
    created_at: Timestamp('When the account was created.'),
  },
  { title: 'Account' },
);

export const ScorerBody = Type.Object(
  {
    id: Type.String({ description: 'Scorer id (the `scorer_id` of the scoring routes).' }),
    name: Type.String(),
    type: Type.String({ description: 'Scorer type (see GET /v2/account/scorer-types).' }),
    threshold: Type.String({ description: 'Threshold, as stored (decimal text).' }),
    weights: Type.Record(Type.String(), Type.String(), { description: 'Weight overrides.' }),
    settings: Type.Record(Type.String(), Type.Unknown(), { description: 'The type\'s own settings.' }),
    requires_signature: Type.Boolean(),
    created_at: Timestamp('Created.'),
    updated_at: Timestamp('Last changed.'),
  },
  { title: 'AccountScorer' },
);

export const ScorerList = Type.Object({ items: Type.Array(ScorerBody) }, { title: 'AccountScorerList' });

const ScorerFields = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: Printable }),
  type: Type.String({ minLength: 1, maxLength: 50, pattern: Printable, description: 'A scorer type name; default `weighted`.' }),
  threshold: Decimal('Threshold (default: the catalogue\'s, 20).'),
  weights: Weights,
  settings: Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 50, description: 'The type\'s own settings.' }),
  requires_signature: Type.Boolean({ description: 'Submissions must carry a wallet signature.' }),
};

export const NewScorer = Type.Object(
  {
    name: ScorerFields.name,
    type: Type.Optional(ScorerFields.type),
    threshold: Type.Optional(ScorerFields.threshold),
    weights: Type.Optional(ScorerFields.weights),
    settings: Type.Optional(ScorerFields.settings),
    requires_signature: Type.Optional(ScorerFields.requires_signature),
  },
  { title: 'NewScorer', additionalProperties: false },
);

export const ScorerChanges = Type.Partial(Type.Object(ScorerFields), { title: 'ScorerChanges', additionalProperties: false, minProperties: 1 });

export const ScorerTypes = Type.Object(
  { items: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })) },
  { title: 'ScorerTypes' },
);

export const ScorerParams = Type.Object({ scorer_id: Type.String({ pattern: '^[0-9]{1,15}$', description: 'Scorer id.' }) });

export const KeyBody = Type.Object(
  {
    prefix: Type.String({ description: 'The key\'s public prefix (the part before the dot).' }),
    name: Type.String({ description: 'Label.' }),
    tier: Type.Integer({ description: 'Rate-limit tier (1–4).' }),
    permissions: PermissionListSchema,
    revoked_at: Type.Union([Timestamp('When it was revoked.'), Type.Null()]),
    created_at: Timestamp('Created.'),
  },
  { title: 'AccountApiKey' },
);

export const KeyList = Type.Object({ items: Type.Array(KeyBody) }, { title: 'AccountApiKeyList' });

export const NewKey = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: Printable, description: 'Label.' }),
    permissions: Type.Optional({ ...PermissionListSchema, description: 'The key\'s permissions; default: every one but historical_endpoint.' }),
  },
  { title: 'NewApiKey', additionalProperties: false },
);

export const CreatedKey = Type.Intersect(
  [KeyBody, Type.Object({ key: Type.String({ description: 'The full key `<prefix>.<secret>`, shown only here: only its hash is kept.' }) })],
  { title: 'CreatedApiKey' },
);

export const KeyParams = Type.Object({ prefix: Type.String({ pattern: '^[a-z0-9]{8}$', description: 'Key prefix.' }) });

export const UsageQuery = Type.Object({
  days: Type.Optional(Integer({ minimum: 1, maximum: 90, default: 14, description: 'How many UTC days, ending today (at most 90).' })),
});

export const Usage = Type.Object(
  {
    days: Type.Array(Type.String(), { description: 'The UTC days of the window, oldest first (YYYY-MM-DD).' }),
    keys: Type.Array(
      Type.Object({
        prefix: Type.String(),
        name: Type.String(),
        revoked: Type.Boolean(),
        requests: Type.Array(Type.Integer(), { description: 'Requests per day, aligned with `days` (429 answers included).' }),
        rate_limited: Type.Array(Type.Integer(), { description: '429 answers per day, aligned with `days`.' }),
      }),
    ),
  },
  { title: 'AccountUsage' },
);

export const SignInBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 8192, description: 'The EIP-4361 message exactly as signed.' }),
    signature: Type.String({ minLength: 1, maxLength: SIGNATURE_MAX_LENGTH, description: 'The wallet\'s personal_sign signature of the message, 0x-hex: an EOA\'s, or a contract wallet\'s (ERC-1271, or ERC-6492 before deployment).' }),
  },
  { title: 'PortalSignIn' },
);

export const PortalSessionBody = Type.Object(
  {
    address: { ...AddressSchema, description: 'The signed-in wallet, lower-case.' },
    account_id: Type.String(),
    csrf_token: Type.String({ description: 'Send it as `X-CSRF-Token` on every POST, PATCH and DELETE made with the session cookie.' }),
    expires_at: Timestamp('When the session ends.'),
  },
  { title: 'PortalSession' },
);

export const PortalSiweNonce = Type.Composite(
  [
    SiweNonce,
    Type.Object({
      chainIds: Type.Array(Type.Integer(), { description: 'Every Chain ID a sign-in message may name (SIWE_ALLOWED_CHAIN_IDS); a wallet on one of them signs with its own.' }),
    }),
  ],
  { title: 'PortalSiweNonce' },
);
