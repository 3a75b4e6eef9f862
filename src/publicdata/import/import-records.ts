import type {
  BountiesTable,
  BountyStatus,
  ContributionsTable,
  GrantRoundsTable,
  GrantsTable,
  ProfilesTable,
} from '../../db/tables/public-data.js';
import { descriptionHash, titleKey } from '../grants/grants.service.js';
import { handleKey } from '../profiles.js';
import { readBountyVocabulary } from '../bounties/bounty-vocabulary-records.js';
import { decimalOrderKey } from '../values.js';
import { Fields, HANDLE, type Problem } from './import-fields.js';

/**
 * Validation of the import format (docs/public-data-import.md). Each record is
 * checked on its own and becomes a row; every problem is reported as
 * `<section>[<index>].<field>: <problem>` and the record is left out.
 */

export type ProfileRecord = Omit<ProfilesTable, 'id' | 'created_at' | 'updated_at'>;
export type RoundRecord = GrantRoundsTable;
export interface GrantRecord {
  row: Omit<GrantsTable, 'admin_profile_id'>;
  adminHandle: string | null;
  teamHandles: string[];
}
export interface ContributionRecord {
  row: Omit<ContributionsTable, 'profile_id'>;
  contributorHandle: string | null;
}
export type BountyRecord = BountiesTable;

export const BOUNTY_STATUSES: readonly BountyStatus[] = ['open', 'started', 'submitted', 'done', 'expired'];
/** Statuses in which a bounty is not completed (`is_open` true). */
export const OPEN_STATUSES: readonly BountyStatus[] = ['open', 'started', 'submitted'];

/** Reads a record, or reports that it is not an object. */
function fieldsOf(path: string, record: unknown, problems: Problem[]): Fields | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    problems.push({ at: path, problem: 'not a JSON object' });
    return null;
  }
  return new Fields(path, record as Record<string, unknown>, problems);
}

/** Runs `read` on a record; the record counts only if it added no problem. */
function checked<T>(path: string, record: unknown, problems: Problem[], read: (f: Fields) => T): T | null {
  const before = problems.length;
  const fields = fieldsOf(path, record, problems);
  if (!fields) return null;
  const value = read(fields);
  return problems.length === before ? value : null;
}

export function readProfile(path: string, record: unknown, problems: Problem[]): ProfileRecord | null {
  return checked(path, record, problems, (f) => {
    const handle = f.text('handle', { required: true, max: 100 });
    if (handle && !HANDLE.test(handle)) f.fail('handle', 'not a handle (letters, digits, - _ . ; at most 100)');
    return {
      handle,
      handle_key: handleKey(handle),
      url: f.url('url'),
      avatar_url: f.url('avatar_url'),
      github_url: f.url('github_url') ?? (handle ? `https://github.com/${handle}` : null),
      keywords: JSON.stringify(f.strings('keywords')),
      position: f.integer('position'),
      total_earned: f.decimal('total_earned') ?? '0',
      organizations: f.object('organizations'),
      export_opt_out: f.boolean('export_opt_out', false) ? 1 : 0,
    };
  });
}

export function readRound(path: string, record: unknown, problems: Problem[]): RoundRecord | null {
  return checked(path, record, problems, (f) => {
    const number = f.integer('number', { required: true, min: 1 });
    const start = f.dateTime('start', true);
    const end = f.dateTime('end', true);
    if (start !== null && end !== null && end <= start) f.fail('end', 'not after start');
    return { number, name: f.text('name', { max: 200, fallback: `Round ${number}` }), start_at: start ?? 0, end_at: end ?? 0 };
  });
}

export function slugOf(title: string): string {
  return (
    title
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 100) || 'grant'
  );
}

export function readGrant(path: string, record: unknown, problems: Problem[], now: number): GrantRecord | null {
  return checked(path, record, problems, (f) => {
    const title = f.text('title', { required: true, max: 500 });
    const description = f.text('description');
    const createdOn = f.dateTime('created_on') ?? now;
    return {
      row: {
        id: f.integer('id', { required: true, min: 1 }),
        active: f.boolean('active', true) ? 1 : 0,
        title,
        title_key: titleKey(title),
        slug: f.text('slug', { max: 200 }) || slugOf(title),
        description,
        description_hash: descriptionHash(description),
        reference_url: f.url('reference_url') ?? '',
        logo: f.url('logo'),
        admin_address: f.address('admin_address', true) ?? '',
        amount_received: f.decimal('amount_received') ?? '0',
        token_address: f.address('token_address'),
        token_symbol: f.text('token_symbol', { max: 50, fallback: 'DAI' }),
        contract_address: f.address('contract_address'),
        metadata: f.object('metadata'),
        network: f.text('network', { max: 50, fallback: 'mainnet' }),
        required_gas_price: f.decimal('required_gas_price') ?? '0',
        grant_type: f.text('grant_type', { max: 100 }),
        created_on: createdOn,
        modified_on: f.dateTime('modified_on') ?? createdOn,
      },
      adminHandle: f.handle('admin_profile'),
      teamHandles: f.handles('team_members'),
    };
  });
}

export function readContribution(path: string, record: unknown, problems: Problem[]): ContributionRecord | null {
  return checked(path, record, problems, (f) => ({
    row: {
      id: f.integer('id', { required: true, min: 1 }),
      grant_id: f.integer('grant', { required: true, min: 1 }),
      round_number: f.integer('round', { min: 1, fallback: 0 }) || null,
      address: f.address('address', true) ?? '',
      amount: f.decimal('amount', true) ?? '0',
      token_symbol: f.text('token', { required: true, max: 50 }),
      created_on: f.dateTime('created_on', true) ?? 0,
      comment: f.text('comment', { max: 2000 }),
      anonymized: f.boolean('anonymized', false) ? 1 : 0,
    },
    contributorHandle: f.handle('contributor'),
  }));
}

const ISSUE_URL = /^https?:\/\/[^/]+\/([^/]+)\/([^/]+)\/(?:issues|pull)\/(\d+)/;

export function readBounty(path: string, record: unknown, problems: Problem[]): BountyRecord | null {
  return checked(path, record, problems, (f) => {
    const githubUrl = f.url('github_url', true) ?? '';
    const issue = ISSUE_URL.exec(githubUrl);
    const web3Created = f.dateTime('web3_created', true) ?? 0;
    const createdOn = f.dateTime('created_on') ?? web3Created;
    const status = f.text('status', { required: true, max: 20 }) as BountyStatus;
    if (status && !BOUNTY_STATUSES.includes(status)) f.fail('status', `not one of ${BOUNTY_STATUSES.join(', ')}`);
    const isOpen = OPEN_STATUSES.includes(status);
    if (f.boolean('is_open', isOpen) !== isOpen) f.fail('is_open', `${String(!isOpen)} contradicts status "${status}"`);
    const valueInToken = f.decimal('value_in_token', true) ?? '0';
    const valueInEth = f.decimal('value_in_eth');
    const valueInUsdt = f.decimal('value_in_usdt');
    const valueInUsdtNow = f.decimal('value_in_usdt_now');
    return {
      id: f.integer('id', { required: true, min: 1 }),
      title: f.text('title', { required: true, max: 500 }),
      github_url: githubUrl,
      github_org_name: f.text('github_org_name', { max: 200, fallback: issue?.[1] ?? '' }),
      github_repo_name: f.text('github_repo_name', { max: 200, fallback: issue?.[2] ?? '' }),
      github_issue_number: f.text('github_issue_number', { max: 20, fallback: issue?.[3] ?? '' }),
      created_on: createdOn,
      modified_on: f.dateTime('modified_on') ?? createdOn,
      web3_created: web3Created,
      expires_date: f.dateTime('expires_date', true) ?? 0,
      value_in_token: valueInToken,
      value_in_token_sort: decimalOrderKey(valueInToken),
      token_name: f.text('token_name', { required: true, max: 50 }),
      token_address: f.address('token_address'),
      bounty_type: f.text('bounty_type', { max: 100 }),
      project_length: f.text('project_length', { max: 100 }),
      experience_level: f.text('experience_level', { max: 100 }),
      keywords: Array.isArray(f.raw('keywords')) ? f.strings('keywords').join(',') : f.text('keywords', { max: 2000 }),
      current_bounty: f.boolean('current_bounty', true) ? 1 : 0,
      value_in_eth: valueInEth,
      value_in_eth_sort: decimalOrderKey(valueInEth),
      value_in_usdt: valueInUsdt,
      value_in_usdt_sort: decimalOrderKey(valueInUsdt),
      value_in_usdt_now: valueInUsdtNow,
      value_in_usdt_now_sort: decimalOrderKey(valueInUsdtNow),
      action_urls: f.object('action_urls'),
      paid: f.array('paid'),
      status,
      is_open: isOpen ? 1 : 0,
      bounty_owner_address: f.address('bounty_owner_address', true) ?? '',
      bounty_owner_email: f.text('bounty_owner_email', { max: 320 }),
      bounty_owner_github_username: f.text('bounty_owner_github_username', { max: 100 }),
      metadata: f.object('metadata'),
      fulfiller_address: f.address('fulfiller_address'),
      fulfiller_email: f.optionalText('fulfiller_email', 320),
      fulfiller_github_username: f.optionalText('fulfiller_github_username', 100),
      fulfiller_metadata: f.object('fulfiller_metadata'),
      ...readBountyVocabulary(f),
    };
  });
}
