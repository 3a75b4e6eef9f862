import type { BountyOrderColumn } from './bounties.repository.js';

/**
 * `order_by` names (the wire names) and the column each sorts by: this
 * service's own fields, then every name of the original service's public
 * client (48 names; `idx_*` sort by the field they index, `_val_usd_db` by
 * `value_in_usdt`, decimals by their order key, `interested` by the number of
 * interested workers).
 */
export const BOUNTY_ORDER_FIELDS: Record<string, BountyOrderColumn> = {
  pk: 'id',
  id: 'id',
  created_on: 'created_on',
  modified_on: 'modified_on',
  web3_created: 'web3_created',
  expires_date: 'expires_date',
  title: 'title',
  github_url: 'github_url',
  github_org_name: 'github_org_name',
  github_repo_name: 'github_repo_name',
  token_name: 'token_name',
  bounty_type: 'bounty_type',
  project_length: 'project_length',
  experience_level: 'experience_level',
  status: 'status',
  is_open: 'is_open',
  bounty_owner_address: 'bounty_owner_address',
  bounty_owner_github_username: 'bounty_owner_github_username',
  value_in_token: 'value_in_token_sort',
  value_in_eth: 'value_in_eth_sort',
  value_in_usdt: 'value_in_usdt_sort',
  value_in_usdt_now: 'value_in_usdt_now_sort',
  // The original client's names not listed above.
  web3_type: 'web3_type',
  token_address: 'token_address',
  github_comments: 'github_comments',
  bounty_owner_email: 'bounty_owner_email',
  bounty_owner_name: 'bounty_owner_name',
  raw_data: 'raw_data',
  metadata: 'metadata',
  current_bounty: 'current_bounty',
  _val_usd_db: 'value_in_usdt_sort',
  contract_address: 'contract_address',
  network: 'network',
  idx_experience_level: 'experience_level',
  idx_project_length: 'project_length',
  idx_status: 'status',
  issue_description: 'issue_description',
  standard_bounties_id: 'standard_bounties_id',
  num_fulfillments: 'num_fulfillments',
  balance: 'balance_sort',
  accepted: 'accepted',
  interested: 'interested_count',
  interested_comment: 'interested_comment',
  submissions_comment: 'submissions_comment',
  override_status: 'override_status',
  last_comment_date: 'last_comment_date',
  fulfillment_accepted_on: 'fulfillment_accepted_on',
  fulfillment_submitted_on: 'fulfillment_submitted_on',
  fulfillment_started_on: 'fulfillment_started_on',
  canceled_on: 'canceled_on',
  snooze_warnings_for_days: 'snooze_warnings_for_days',
  token_value_time_peg: 'token_value_time_peg',
  token_value_in_usdt: 'token_value_in_usdt_sort',
  value_true: 'value_true_sort',
  privacy_preferences: 'privacy_preferences',
};

