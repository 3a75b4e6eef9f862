/**
 * Bounty fields of the original service's vocabulary (migration 0010): what
 * the public bounty client filters and orders by. All optional in the import
 * format; an absent field is null, and nulls sort last in both directions.
 */
export interface BountyVocabularyColumns {
  web3_type: string | null;
  github_comments: number | null;
  bounty_owner_name: string | null;
  /** JSON text of the source's raw record, as imported. */
  raw_data: string | null;
  contract_address: string | null;
  network: string | null;
  issue_description: string | null;
  standard_bounties_id: number | null;
  num_fulfillments: number | null;
  balance: string | null;
  /** Order key of `balance` (see values.ts `decimalOrderKey`); null when `balance` is. */
  balance_sort: string | null;
  accepted: number | null;
  /** JSON array of the interested workers' platform usernames. */
  interested: string | null;
  /** Number of interested workers (the `interested` order); null when `interested` is. */
  interested_count: number | null;
  interested_comment: number | null;
  submissions_comment: number | null;
  override_status: string | null;
  last_comment_date: number | null;
  fulfillment_accepted_on: number | null;
  fulfillment_submitted_on: number | null;
  fulfillment_started_on: number | null;
  canceled_on: number | null;
  snooze_warnings_for_days: number | null;
  token_value_time_peg: number | null;
  token_value_in_usdt: string | null;
  token_value_in_usdt_sort: string | null;
  value_true: string | null;
  value_true_sort: string | null;
  /** JSON object. */
  privacy_preferences: string | null;
  /** JSON array of fulfillment objects, each with `fulfiller_github_username`. */
  fulfillments: string | null;
}

/** Platform usernames related to a bounty: its interested workers and its fulfillers (lower case). */
export interface BountyPeopleTable {
  bounty_id: number;
  role: 'interested' | 'fulfiller';
  username_key: string;
}
