import type { BountyVocabularyColumns } from '../db/tables/bounty-vocabulary.js';
import { decimalAsNumber, formatDateTime, parseStoredJson } from './values.js';

/** The vocabulary fields as a bounty object shows them; null when not imported. */
export interface BountyVocabulary {
  web3_type: string | null;
  github_comments: number | null;
  bounty_owner_name: string | null;
  raw_data: unknown;
  contract_address: string | null;
  network: string | null;
  issue_description: string | null;
  standard_bounties_id: number | null;
  num_fulfillments: number | null;
  balance: string | null;
  accepted: boolean | null;
  interested: string[] | null;
  interested_comment: number | null;
  submissions_comment: number | null;
  override_status: string | null;
  last_comment_date: string | null;
  fulfillment_accepted_on: string | null;
  fulfillment_submitted_on: string | null;
  fulfillment_started_on: string | null;
  canceled_on: string | null;
  snooze_warnings_for_days: number | null;
  token_value_time_peg: string | null;
  token_value_in_usdt: number | null;
  value_true: number | null;
  privacy_preferences: Record<string, unknown> | null;
  fulfillments: Record<string, unknown>[] | null;
}

const date = (ms: number | null) => (ms === null ? null : formatDateTime(Number(ms)));
const json = <T>(text: string | null): T | null => (text === null ? null : parseStoredJson<T>(text));

export function renderVocabulary(row: BountyVocabularyColumns): BountyVocabulary {
  return {
    web3_type: row.web3_type,
    github_comments: row.github_comments,
    bounty_owner_name: row.bounty_owner_name,
    raw_data: json(row.raw_data),
    contract_address: row.contract_address,
    network: row.network,
    issue_description: row.issue_description,
    standard_bounties_id: row.standard_bounties_id,
    num_fulfillments: row.num_fulfillments,
    balance: row.balance,
    accepted: row.accepted === null ? null : row.accepted === 1,
    interested: json(row.interested),
    interested_comment: row.interested_comment,
    submissions_comment: row.submissions_comment,
    override_status: row.override_status,
    last_comment_date: date(row.last_comment_date),
    fulfillment_accepted_on: date(row.fulfillment_accepted_on),
    fulfillment_submitted_on: date(row.fulfillment_submitted_on),
    fulfillment_started_on: date(row.fulfillment_started_on),
    canceled_on: date(row.canceled_on),
    snooze_warnings_for_days: row.snooze_warnings_for_days,
    token_value_time_peg: date(row.token_value_time_peg),
    token_value_in_usdt: decimalAsNumber(row.token_value_in_usdt),
    value_true: decimalAsNumber(row.value_true),
    privacy_preferences: json(row.privacy_preferences),
    fulfillments: json(row.fulfillments),
  };
}
