import type { BountyPeopleTable, BountyVocabularyColumns } from '../../db/tables/bounty-vocabulary.js';
import type { Fields } from '../import/import-fields.js';
import { decimalOrderKey } from '../values.js';

/** Longest `raw_data` (as JSON text) a bounty may carry. */
const MAX_RAW_DATA = 100_000;
const MAX_PEOPLE = 1000;

/**
 * The optional vocabulary fields of a bounty record (docs/public-data-import.md):
 * absent or null = null; a present value of the wrong type is a problem.
 */
export function readBountyVocabulary(f: Fields): BountyVocabularyColumns {
  const present = (field: string) => f.raw(field) !== undefined;
  const integer = (field: string) => (present(field) ? f.integer(field) : null);
  const text = (field: string, max = 500) => (present(field) ? f.text(field, { max }) : null);
  const flag = (field: string) => (present(field) ? (f.boolean(field, false) ? 1 : 0) : null);
  const balance = f.decimal('balance');
  const tokenValueInUsdt = f.decimal('token_value_in_usdt');
  const valueTrue = f.decimal('value_true');
  const interested = present('interested') ? f.handles('interested') : null;
  return {
    web3_type: text('web3_type', 50),
    github_comments: integer('github_comments'),
    bounty_owner_name: text('bounty_owner_name', 200),
    raw_data: rawData(f),
    contract_address: f.address('contract_address'),
    network: text('network', 50),
    issue_description: text('issue_description', 50_000),
    standard_bounties_id: integer('standard_bounties_id'),
    num_fulfillments: integer('num_fulfillments'),
    balance,
    balance_sort: balance === null ? null : decimalOrderKey(balance),
    accepted: flag('accepted'),
    interested: interested === null ? null : JSON.stringify(interested),
    interested_count: interested === null ? null : interested.length,
    interested_comment: integer('interested_comment'),
    submissions_comment: integer('submissions_comment'),
    override_status: text('override_status', 255),
    last_comment_date: f.dateTime('last_comment_date'),
    fulfillment_accepted_on: f.dateTime('fulfillment_accepted_on'),
    fulfillment_submitted_on: f.dateTime('fulfillment_submitted_on'),
    fulfillment_started_on: f.dateTime('fulfillment_started_on'),
    canceled_on: f.dateTime('canceled_on'),
    snooze_warnings_for_days: integer('snooze_warnings_for_days'),
    token_value_time_peg: f.dateTime('token_value_time_peg'),
    token_value_in_usdt: tokenValueInUsdt,
    token_value_in_usdt_sort: tokenValueInUsdt === null ? null : decimalOrderKey(tokenValueInUsdt),
    value_true: valueTrue,
    value_true_sort: valueTrue === null ? null : decimalOrderKey(valueTrue),
    privacy_preferences: present('privacy_preferences') ? f.object('privacy_preferences') : null,
    fulfillments: fulfillments(f),
  };
}

function rawData(f: Fields): string | null {
  const value = f.raw('raw_data');
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  if (text.length > MAX_RAW_DATA) {
    f.fail('raw_data', `longer than ${MAX_RAW_DATA} characters as JSON`);
    return null;
  }
  return text;
}

/** `fulfillments`: objects, each naming its fulfiller by `fulfiller_github_username` (a handle); other keys are kept. */
function fulfillments(f: Fields): string | null {
  const value = f.raw('fulfillments');
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length > MAX_PEOPLE) {
    f.fail('fulfillments', `not an array of at most ${MAX_PEOPLE} fulfillment objects`);
    return null;
  }
  value.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) f.fail(`fulfillments[${i}]`, 'not a JSON object');
    else f.handle('fulfillments', (item as Record<string, unknown>).fulfiller_github_username ?? null, `fulfillments[${i}].fulfiller_github_username`);
  });
  const text = JSON.stringify(value);
  if (text.length > MAX_RAW_DATA) f.fail('fulfillments', `longer than ${MAX_RAW_DATA} characters as JSON`);
  return text;
}

/**
 * The people rows of a stored bounty: its interested workers, and its fulfillers
 * (every `fulfillments[].fulfiller_github_username` plus `fulfiller_github_username`).
 */
export function bountyPeople(row: BountyVocabularyColumns & { id: number; fulfiller_github_username: string | null }): BountyPeopleTable[] {
  const interested = row.interested === null ? [] : (JSON.parse(row.interested) as string[]);
  const fulfillers = row.fulfillments === null ? [] : (JSON.parse(row.fulfillments) as { fulfiller_github_username: string }[]).map((x) => x.fulfiller_github_username);
  if (row.fulfiller_github_username) fulfillers.push(row.fulfiller_github_username);
  const rows = (role: BountyPeopleTable['role'], names: string[]) =>
    [...new Set(names.map((n) => n.toLowerCase()))].map((username_key) => ({ bounty_id: row.id, role, username_key }));
  return [...rows('interested', interested), ...rows('fulfiller', fulfillers)];
}
