import type { BountiesTable as BountyRow } from '../../db/tables/public-data.js';

/**
 * The JSON text of a bounty as `renderBounty` shows it, written straight from
 * the row: the same keys in the same order, but no intermediate object, and the
 * stored JSON columns (written by the import with JSON.stringify) copied as
 * they are instead of parsed and serialised again. A list of 50 bounties is
 * about 100 KB; this is what an uncached list spent its JavaScript time on, so
 * the import stores each bounty's text (`bountyBody`, table `bounty_bodies`) and
 * a list only joins the stored texts. `bounty-json.test.ts` checks both against
 * `JSON.stringify(renderBounty(row))`.
 */
export function bountyJson(row: BountyRow, baseUrl: string, nowText: string): string {
  const body = bountyBody(row);
  return bountyJsonOfBody(row.id, body.head, body.tail, escapedBase(baseUrl), nowText);
}

/**
 * The two parts of a bounty's JSON that depend on the row alone. The rest depends on the
 * request: `pk` and `url` come first (the url holds the request's base URL), and `now` (when
 * the response was built) sits between `value_in_usdt_now` and `action_urls`; so the text is
 * stored as the part before `now` (`head`, from `,"created_on"`) and the part after it (`tail`).
 */
export interface BountyBody {
  head: string;
  tail: string;
}

export function bountyBody(row: BountyRow): BountyBody {
  const head =
    `,"created_on":${date(row.created_on)}` +
    `,"modified_on":${date(row.modified_on)}` +
    `,"title":${str(row.title)}` +
    `,"web3_created":${date(row.web3_created)}` +
    `,"value_in_token":${str(row.value_in_token)}` +
    `,"token_name":${str(row.token_name)}` +
    `,"token_address":${str(row.token_address)}` +
    `,"bounty_type":${str(row.bounty_type)}` +
    `,"project_length":${str(row.project_length)}` +
    `,"experience_level":${str(row.experience_level)}` +
    `,"github_url":${str(row.github_url)}` +
    `,"github_org_name":${str(row.github_org_name)}` +
    `,"github_repo_name":${str(row.github_repo_name)}` +
    `,"github_issue_number":${str(row.github_issue_number)}` +
    `,"keywords":${str(row.keywords)}` +
    `,"current_bounty":${row.current_bounty === 1}` +
    `,"expires_date":${date(row.expires_date)}` +
    `,"value_in_eth":${decimal(row.value_in_eth)}` +
    `,"value_in_usdt":${decimal(row.value_in_usdt)}` +
    `,"value_in_usdt_now":${decimal(row.value_in_usdt_now)}`;
  const tail =
    `,"action_urls":${row.action_urls}` +
    `,"paid":${row.paid}` +
    `,"is_open":${row.is_open === 1}` +
    `,"status":${str(row.status)}` +
    `,"bounty_owner_address":${str(row.bounty_owner_address)}` +
    `,"bounty_owner_email":${str(row.bounty_owner_email)}` +
    `,"bounty_owner_github_username":${str(row.bounty_owner_github_username)}` +
    `,"metadata":${row.metadata}` +
    `,"fulfiller_address":${str(row.fulfiller_address)}` +
    `,"fulfiller_email":${str(row.fulfiller_email)}` +
    `,"fulfiller_github_username":${str(row.fulfiller_github_username)}` +
    `,"fulfiller_metadata":${row.fulfiller_metadata}` +
    `,"web3_type":${str(row.web3_type)}` +
    `,"github_comments":${int(row.github_comments)}` +
    `,"bounty_owner_name":${str(row.bounty_owner_name)}` +
    `,"raw_data":${stored(row.raw_data)}` +
    `,"contract_address":${str(row.contract_address)}` +
    `,"network":${str(row.network)}` +
    `,"issue_description":${str(row.issue_description)}` +
    `,"standard_bounties_id":${int(row.standard_bounties_id)}` +
    `,"num_fulfillments":${int(row.num_fulfillments)}` +
    `,"balance":${str(row.balance)}` +
    `,"accepted":${row.accepted === null ? 'null' : row.accepted === 1}` +
    `,"interested":${stored(row.interested)}` +
    `,"interested_comment":${int(row.interested_comment)}` +
    `,"submissions_comment":${int(row.submissions_comment)}` +
    `,"override_status":${str(row.override_status)}` +
    `,"last_comment_date":${optionalDate(row.last_comment_date)}` +
    `,"fulfillment_accepted_on":${optionalDate(row.fulfillment_accepted_on)}` +
    `,"fulfillment_submitted_on":${optionalDate(row.fulfillment_submitted_on)}` +
    `,"fulfillment_started_on":${optionalDate(row.fulfillment_started_on)}` +
    `,"canceled_on":${optionalDate(row.canceled_on)}` +
    `,"snooze_warnings_for_days":${int(row.snooze_warnings_for_days)}` +
    `,"token_value_time_peg":${optionalDate(row.token_value_time_peg)}` +
    `,"token_value_in_usdt":${decimal(row.token_value_in_usdt)}` +
    `,"value_true":${decimal(row.value_true)}` +
    `,"privacy_preferences":${stored(row.privacy_preferences)}` +
    `,"fulfillments":${stored(row.fulfillments)}}`;
  return { head, tail };
}

/** A stored bounty of a list page: its id and its stored text. */
export interface BountyBodyRow extends BountyBody {
  id: number;
}

/**
 * The base URL as it appears inside the JSON string of `url`: JSON escapes each UTF-16
 * unit on its own, so the escaped base followed by the (ASCII) path is the escaped url.
 */
export function escapedBase(baseUrl: string): string {
  return JSON.stringify(baseUrl).slice(1, -1);
}

function bountyJsonOfBody(id: number, head: string, tail: string, base: string, nowText: string): string {
  return `{"pk":${id},"url":"${base}/api/v0.1/bounties/?pk=${id}"${head},"now":${nowText}${tail}`;
}

/** A JSON array of bounties (what a list document holds), from rows. */
export function bountyListJson(rows: BountyRow[], baseUrl: string, now: number): string {
  return bountyListJsonOfBodies(
    rows.map((row) => ({ id: row.id, ...bountyBody(row) })),
    baseUrl,
    now,
  );
}

/** One bounty's JSON from its stored text (the detail route). */
export function bountyJsonOfStored(row: BountyBodyRow, baseUrl: string, now: number): string {
  return bountyJsonOfBody(row.id, row.head, row.tail, escapedBase(baseUrl), date(now));
}

/** A JSON array of bounties from their stored texts: concatenation only. */
export function bountyListJsonOfBodies(rows: BountyBodyRow[], baseUrl: string, now: number): string {
  const nowText = date(now);
  const base = escapedBase(baseUrl);
  let json = '[';
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    json += (i === 0 ? '' : ',') + bountyJsonOfBody(row.id, row.head, row.tail, base, nowText);
  }
  return `${json}]`;
}

/** A time as its JSON string (the list's `now`). */
export const jsonDate = (ms: number): string => date(ms);

const str = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));
// An ISO 8601 instant has nothing to escape.
const date = (ms: number): string => `"${new Date(Number(ms)).toISOString()}"`;
const optionalDate = (ms: number | null): string => (ms === null ? 'null' : date(ms));
const int = (value: number | null): string => (value === null ? 'null' : JSON.stringify(value));
// As decimalAsNumber then JSON.stringify: a decimal text becomes the nearest double.
const decimal = (text: string | null): string => (text === null ? 'null' : JSON.stringify(Number(text)));
// Stored JSON text, already in JSON.stringify's form.
const stored = (text: string | null): string => (text === null ? 'null' : text);
