import { type TSchema, Type } from '@sinclair/typebox';
import { Integer } from '../http/schemas.js';
import { MAX_OFFSET } from './values.js';

/** Response shapes of the public data API (documentation; bodies are sent pre-serialized from the cache). */

/** A query-string text parameter (its content is checked by the domain, which refuses NUL characters). */
export const QueryText = (maxLength: number, description: string, extra: Record<string, unknown> = {}) =>
  Type.String({ maxLength, description, ...extra });

/** `offset` of the public lists; past MAX_OFFSET the domain answers 400 invalid_offset (with its own message, hence no `maximum` here). */
export const PublicOffsetSchema = Integer({
  minimum: 0,
  default: 0,
  description: `Items to skip, at most ${MAX_OFFSET} (deeper → 400 invalid_offset; page through filters such as pk__gt instead).`,
});

const DateTime = (description: string) =>
  Type.String({ description: `${description} (ISO 8601 with milliseconds and Z).`, examples: ['2026-03-01T12:00:00.000Z'] });
const Address = (description: string) => Type.String({ description: `${description}: 0x and 40 lower-case hexadecimal digits.` });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const NullableOf = (schema: TSchema, description: string) => Type.Union([schema, Type.Null()], { description });
const Dict = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

export const ProfileSchema = Type.Object(
  {
    id: Type.Integer(),
    url: Type.Union([Type.String(), Type.Null()], { description: 'Profile page.' }),
    handle: Type.String({ description: 'Handle on the code-hosting platform.' }),
    keywords: Type.Array(Type.String()),
    position: Type.Integer({ description: 'Position on the weekly earners leaderboard.' }),
    avatar_url: Type.Union([Type.String(), Type.Null()]),
    github_url: Type.Union([Type.String(), Type.Null()]),
    total_earned: Type.Number({ description: 'Base currency collected.' }),
    organizations: Dict('Profiles this user works with.'),
  },
  { title: 'Profile' },
);

export const BountySchema = Type.Object(
  {
    pk: Type.Integer({ description: 'Bounty id (the `pk` filter).' }),
    url: Type.String({ description: 'Absolute URL of this bounty in this API.' }),
    created_on: DateTime('Creation time'),
    modified_on: DateTime('Last modification'),
    title: Type.String(),
    web3_created: DateTime('Time of the transaction holding the bounty'),
    value_in_token: Type.String({ description: 'Token amount rewarded, exact decimal string.', examples: ['1500000000000000000'] }),
    token_name: Type.String(),
    token_address: Nullable(Address('Token contract')),
    bounty_type: Type.String(),
    project_length: Type.String(),
    experience_level: Type.String(),
    github_url: Type.String(),
    github_org_name: Type.String(),
    github_repo_name: Type.String(),
    github_issue_number: Type.String(),
    keywords: Type.String({ description: 'Comma-delimited keywords.' }),
    current_bounty: Type.Boolean(),
    expires_date: DateTime('Deadline'),
    value_in_eth: Type.Union([Type.Number(), Type.Null()], { description: 'Value in the base currency.' }),
    value_in_usdt: Type.Union([Type.Number(), Type.Null()], { description: 'Approximate USD value at web3_created.' }),
    value_in_usdt_now: Type.Union([Type.Number(), Type.Null()], { description: 'Approximate current USD value.' }),
    now: DateTime('Server time when this response was built (cached responses keep it)'),
    action_urls: Dict('Where a user can act on the bounty.'),
    paid: Type.Array(Type.Unknown(), { description: 'Users paid from the bounty.' }),
    is_open: Type.Boolean({ description: 'True while status is open, started or submitted.' }),
    status: Type.Union(['open', 'started', 'submitted', 'done', 'expired'].map((s) => Type.Literal(s))),
    bounty_owner_address: Address('Owner'),
    bounty_owner_email: Type.String(),
    bounty_owner_github_username: Type.String(),
    metadata: Dict('Misc metadata about the bounty and creator.'),
    fulfiller_address: Nullable(Address('Fulfiller')),
    fulfiller_email: Type.Union([Type.String(), Type.Null()]),
    fulfiller_github_username: Type.Union([Type.String(), Type.Null()]),
    fulfiller_metadata: Dict('Fulfiller username and notification e-mail; {} when unfulfilled.'),
    // The original service's vocabulary (optional in the import; null when not imported).
    web3_type: NullableOf(Type.String(), 'How the bounty was posted on chain.'),
    github_comments: NullableOf(Type.Integer(), 'Comments on the issue.'),
    bounty_owner_name: NullableOf(Type.String(), "Owner's display name."),
    raw_data: Type.Unknown({ description: 'The raw record of the source, as imported (any JSON), or null.' }),
    contract_address: NullableOf(Type.String(), 'Bounty contract address.'),
    network: NullableOf(Type.String(), 'Network of the bounty contract (e.g. mainnet).'),
    issue_description: NullableOf(Type.String(), 'Text of the issue.'),
    standard_bounties_id: NullableOf(Type.Integer(), 'Id on the standard bounties contract.'),
    num_fulfillments: NullableOf(Type.Integer(), 'Number of fulfillments.'),
    balance: NullableOf(Type.String(), 'Balance left, exact decimal string.'),
    accepted: NullableOf(Type.Boolean(), 'Whether a fulfillment was accepted.'),
    interested: NullableOf(Type.Array(Type.String()), 'Platform usernames of the interested workers.'),
    interested_comment: NullableOf(Type.Integer(), 'Id of the interest comment on the issue.'),
    submissions_comment: NullableOf(Type.Integer(), 'Id of the submissions comment on the issue.'),
    override_status: NullableOf(Type.String(), 'Status override set by staff.'),
    last_comment_date: NullableOf(DateTime('Last comment on the issue'), 'Last comment on the issue.'),
    fulfillment_accepted_on: NullableOf(DateTime('Fulfillment accepted'), 'When a fulfillment was accepted.'),
    fulfillment_submitted_on: NullableOf(DateTime('Fulfillment submitted'), 'When work was submitted.'),
    fulfillment_started_on: NullableOf(DateTime('Work started'), 'When work started.'),
    canceled_on: NullableOf(DateTime('Cancellation'), 'When the bounty was cancelled.'),
    snooze_warnings_for_days: NullableOf(Type.Integer(), 'Days the expiry warnings are snoozed.'),
    token_value_time_peg: NullableOf(DateTime('Time of the token price used'), 'Time of the token price used.'),
    token_value_in_usdt: NullableOf(Type.Number(), 'USD price of one token at token_value_time_peg.'),
    value_true: NullableOf(Type.Number(), 'Token amount in whole tokens.'),
    privacy_preferences: NullableOf(Dict('Privacy preferences of the owner.'), 'Privacy preferences of the owner.'),
    fulfillments: NullableOf(Type.Array(Dict('A fulfillment; `fulfiller_github_username` is always present.')), 'Fulfillments as imported.'),
  },
  { title: 'Bounty' },
);

export const GrantSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Grant id (the `pk` filter and the id in export file names).' }),
    active: Type.Boolean(),
    title: Type.String(),
    slug: Type.String(),
    description: Type.String(),
    reference_url: Type.String(),
    logo: Type.Union([Type.String(), Type.Null()]),
    admin_address: Address('Wallet of the grant admin where funds are sent'),
    amount_received: Type.String({ description: 'Total contributions received, exact decimal string.' }),
    token_address: Nullable(Address('Token used with the grant')),
    token_symbol: Type.String(),
    contract_address: Nullable(Address('Grant contract')),
    metadata: Dict('Misc metadata.'),
    network: Type.String(),
    required_gas_price: Type.String({ description: 'Exact decimal string.' }),
    grant_type: Type.String(),
    admin_profile: Type.Union([ProfileSchema, Type.Null()]),
    team_members: Type.Array(ProfileSchema),
  },
  { title: 'Grant' },
);

export const GrantsJsonSchema = Type.Array(
  Type.Object({
    title: Type.String(),
    admin_address: Type.String(),
    token_address: Type.Union([Type.String(), Type.Null()]),
    contract_address: Type.Union([Type.String(), Type.Null()]),
    network: Type.String(),
  }),
  { title: 'GrantsExport' },
);

const ExportMetaSchema = Type.Object(
  {
    generated_at: DateTime('When the export was built'),
    count: Type.Integer(),
    round: Type.Union([Type.Integer(), Type.Null()]),
    grant: Type.Union([Type.Integer(), Type.Null()]),
    api_key: Type.Optional(
      Type.Object(
        {
          _key: Type.String(),
          _secret: Type.Union([Type.String(), Type.Null()], { description: 'Shown only in the response that created it; null afterwards.' }),
        },
        { description: 'Present on browser-session calls of grant exports: credentials for `?_key=…&_secret=…`.' },
      ),
    ),
  },
  { title: 'ExportMeta' },
);

export const AddressExportSchema = Type.Object(
  {
    meta: ExportMetaSchema,
    addresses: Type.Array(Type.String(), { description: 'Distinct lower-case addresses, sorted; opted-out users left out.' }),
  },
  { title: 'AddressExport' },
);

export const ContributorInfoExportSchema = Type.Object(
  {
    meta: ExportMetaSchema,
    contributors: Type.Array(
      Type.Object({
        handle: Type.Union([Type.String(), Type.Null()], { description: 'Null when anonymized.' }),
        picture: Type.Union([Type.String(), Type.Null()], { description: 'Avatar URL; null when anonymized.' }),
        anonymized: Type.Boolean(),
        comment: Type.String(),
      }),
      { description: 'One entry per contribution, in time order.' },
    ),
  },
  { title: 'ContributorInfoExport' },
);
