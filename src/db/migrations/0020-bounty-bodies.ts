import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect.js';

/** Bounties rendered per statement of the backfill (each row is about 2 KB of JSON). */
const BACKFILL_PAGE = 500;

/**
 * Each bounty's JSON as the public API answers it, stored beside the row (minus the
 * request's base URL and time, see bounty-json.ts), so an uncached list reads the ids of its
 * page from an order index and joins their stored texts instead of reading 70 columns and
 * writing 100 KB of JSON per request. A table of its own rather than columns of `bounties`:
 * the texts would double the bounty rows that every index walk and count may visit.
 *
 * The backfill renders each row as the API answered when this migration shipped (byte for byte),
 * paging by id, with a frozen copy of the writer of that day (bounty-json.ts's `bountyBody`): a
 * shipped migration must not change when the application's writer does. A later change of the
 * bounty JSON (a new field) re-renders every row in a migration of its own, after its columns exist.
 */
export function bountyBodies(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('bounty_bodies')
        .addColumn('bounty_id', 'integer', (c) => c.primaryKey().references('bounties.id').onDelete('cascade'))
        .addColumn('head', 'text', (c) => c.notNull())
        .addColumn('tail', 'text', (c) => c.notNull())
        .execute();
      for (let after = -1; ; ) {
        const rows = (await db.selectFrom('bounties').selectAll().where('id', '>', after).orderBy('id').limit(BACKFILL_PAGE).execute()) as BountyRowAt0020[];
        if (rows.length === 0) break;
        await db
          .insertInto('bounty_bodies')
          .values(rows.map((row) => ({ bounty_id: row.id, ...bountyBody(row) })))
          .execute();
        after = rows[rows.length - 1]!.id;
      }
    },
  };
}

/** A row of `bounties` as the backfill reads it (selectAll: every column this migration's writer reads, by name). */
type BountyRowAt0020 = { id: number } & Record<string, any>;

/**
 * The text of a bounty's JSON that depends on the row alone, as bounty-json.ts wrote it when this
 * migration shipped: `head` is the part from `,"created_on"` up to the request's `now`, `tail` the rest.
 */
function bountyBody(row: BountyRowAt0020): { head: string; tail: string } {
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

const str = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));
// An ISO 8601 instant has nothing to escape.
const date = (ms: number): string => `"${new Date(Number(ms)).toISOString()}"`;
const optionalDate = (ms: number | null): string => (ms === null ? 'null' : date(ms));
const int = (value: number | null): string => (value === null ? 'null' : JSON.stringify(value));
// As decimalAsNumber then JSON.stringify: a decimal text becomes the nearest double.
const decimal = (text: string | null): string => (text === null ? 'null' : JSON.stringify(Number(text)));
// Stored JSON text, already in JSON.stringify's form.
const stored = (text: string | null): string => (text === null ? 'null' : text);
