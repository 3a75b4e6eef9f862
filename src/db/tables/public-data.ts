import type { Generated } from 'kysely';
import type { BountyPeopleTable, BountyVocabularyColumns } from './bounty-vocabulary.js';

/**
 * Tables of the public data API (grants, bounties, contributions, exports).
 *
 * Conventions as elsewhere: times are epoch milliseconds, booleans 0/1, money
 * exact decimal text, structured values JSON text. Natural keys of the import
 * format: profile `handle` (case-insensitive, `handle_key`), grant `id`, round
 * `number`, contribution `id`, bounty `id` — grant and bounty ids are the
 * source platform's, so `pk` and `grant<id>.json` stay stable across imports.
 */

export interface ProfilesTable {
  id: Generated<number>;
  /** As imported, e.g. `Alice-Dev`. */
  handle: string;
  /** Lower-case handle: the import key and the login match. */
  handle_key: string;
  /** The OAuth provider's stable subject id (`id`/`sub`) once this profile has logged in; never reassigned. */
  oauth_subject?: string | null;
  url: string | null;
  avatar_url: string | null;
  github_url: string | null;
  /** JSON array of strings. */
  keywords: string;
  position: number;
  /** Exact decimal text (base currency). */
  total_earned: string;
  /** JSON object. */
  organizations: string;
  /** 1 = the user's addresses are left out of every address export. */
  export_opt_out: number;
  created_at: number;
  updated_at: number;
}

export interface GrantsTable {
  /** The source platform's grant id (not generated). */
  id: number;
  active: number;
  title: string;
  /** Lower-case title, for the exact case-insensitive `title` filter. */
  title_key: string;
  slug: string;
  description: string;
  /** Hex SHA-256 of the lower-case description, for the exact `description` filter (descriptions are too long to index). */
  description_hash: string;
  reference_url: string;
  logo: string | null;
  admin_address: string;
  admin_profile_id: number | null;
  amount_received: string;
  token_address: string | null;
  token_symbol: string;
  contract_address: string | null;
  /** JSON object. */
  metadata: string;
  network: string;
  required_gas_price: string;
  grant_type: string;
  created_on: number;
  modified_on: number;
}

export interface GrantTeamMembersTable {
  grant_id: number;
  profile_id: number;
}

export interface GrantRoundsTable {
  /** Round number n of `round<n>.json`. */
  number: number;
  name: string;
  start_at: number;
  end_at: number;
}

export interface ContributionsTable {
  /** The source platform's contribution id. */
  id: number;
  grant_id: number;
  round_number: number | null;
  profile_id: number | null;
  /** Lower-case contributor address. */
  address: string;
  amount: string;
  token_symbol: string;
  created_on: number;
  comment: string;
  anonymized: number;
}

export type BountyStatus = 'open' | 'started' | 'submitted' | 'done' | 'expired';

export interface BountiesTable extends BountyVocabularyColumns {
  /** The source platform's bounty id (`pk`). */
  id: number;
  title: string;
  github_url: string;
  github_org_name: string;
  github_repo_name: string;
  github_issue_number: string;
  created_on: number;
  modified_on: number;
  web3_created: number;
  expires_date: number;
  value_in_token: string;
  /** Order key of value_in_token (see publicdata/decimal-order.ts). */
  value_in_token_sort: string;
  token_name: string;
  token_address: string | null;
  bounty_type: string;
  project_length: string;
  experience_level: string;
  keywords: string;
  current_bounty: number;
  value_in_eth: string | null;
  value_in_eth_sort: string;
  value_in_usdt: string | null;
  value_in_usdt_sort: string;
  value_in_usdt_now: string | null;
  value_in_usdt_now_sort: string;
  /** JSON object. */
  action_urls: string;
  /** JSON array. */
  paid: string;
  status: BountyStatus;
  /** 1 while status is open, started or submitted (kept consistent by the import). */
  is_open: number;
  bounty_owner_address: string;
  bounty_owner_email: string;
  bounty_owner_github_username: string;
  /** JSON object. */
  metadata: string;
  fulfiller_address: string | null;
  fulfiller_email: string | null;
  fulfiller_github_username: string | null;
  /** JSON object; `{}` when unfulfilled. */
  fulfiller_metadata: string;
}

/** `_key`/`_secret` credentials of grant-specific exports; only sha256(secret) is stored. */
export interface ExportCredentialsTable {
  id: Generated<number>;
  profile_id: number;
  api_key: string;
  secret_hash: string;
  created_at: number;
  last_used_at: number | null;
  /** A secret created at login, kept until the first session response has shown it (then NULL). */
  pending_secret?: string | null;
}

/**
 * A bounty's JSON as the public API shows it, minus the parts that depend on the request
 * (`pk`/`url` before `head`, `now` between `head` and `tail`; see bounty-json.ts). Written
 * with the bounty row (migration 0020), so an uncached list is an index walk and a join.
 */
export interface BountyBodiesTable {
  bounty_id: number;
  head: string;
  tail: string;
}

export interface PublicDataTables {
  profiles: ProfilesTable;
  grants: GrantsTable;
  grant_team_members: GrantTeamMembersTable;
  grant_rounds: GrantRoundsTable;
  contributions: ContributionsTable;
  bounties: BountiesTable;
  bounty_people: BountyPeopleTable;
  bounty_bodies: BountyBodiesTable;
  export_credentials: ExportCredentialsTable;
}
