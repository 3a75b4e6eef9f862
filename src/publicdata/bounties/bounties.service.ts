import { AppError } from '../../errors.js';
import type { BountiesRepository, BountyListFilter, BountyOrderColumn, BountyRow, BountyTextColumn, PreparedBountyList } from './bounties.repository.js';
import { BOUNTY_ORDER_FIELDS } from './bounty-order.js';
import { renderVocabulary, type BountyVocabulary } from './bounty-vocabulary-render.js';
import { buildEtag, CachedDocument, cachePrefix, etagOf, type PublicCache } from '../cache.js';
import { bountyJsonOfStored } from './bounty-json.js';
import { checkPaging, checkText, decimalAsNumber, formatDateTime, MAX_ID, parseStoredJson } from '../values.js';

/** Most comma-separated alternatives one filter takes. */
export const MAX_ALTERNATIVES = 50;

/**
 * The substring filters run a LIKE per alternative on every row a list visits (all rows when few
 * match): their alternatives together are bounded, and `raw_data` takes a few short texts.
 */
export const MAX_SUBSTRING_ALTERNATIVES = 10;
export const MAX_RAW_DATA_VALUES = 3;
export const MAX_RAW_DATA_LENGTH = 64;

/** The query of `GET /api/v0.1/bounties/` after schema validation. */
export interface BountyListQuery {
  experience_level?: string;
  project_length?: string;
  bounty_type?: string;
  bounty_owner_address?: string;
  github_url?: string;
  is_open?: string;
  pk?: number;
  bounty_owner_github_username?: string;
  idx_status?: string;
  network?: string;
  standard_bounties_id?: string;
  pk__gt?: number;
  started?: string;
  interested_github_username?: string;
  fulfiller_github_username?: string;
  raw_data?: string;
  order_by?: string;
  limit: number;
  offset: number;
}

export interface Bounty extends BountyVocabulary {
  pk: number;
  url: string;
  created_on: string;
  modified_on: string;
  title: string;
  web3_created: string;
  value_in_token: string;
  token_name: string;
  token_address: string | null;
  bounty_type: string;
  project_length: string;
  experience_level: string;
  github_url: string;
  github_org_name: string;
  github_repo_name: string;
  github_issue_number: string;
  keywords: string;
  current_bounty: boolean;
  expires_date: string;
  value_in_eth: number | null;
  value_in_usdt: number | null;
  value_in_usdt_now: number | null;
  now: string;
  action_urls: Record<string, unknown>;
  paid: unknown[];
  is_open: boolean;
  status: string;
  bounty_owner_address: string;
  bounty_owner_email: string;
  bounty_owner_github_username: string;
  metadata: Record<string, unknown>;
  fulfiller_address: string | null;
  fulfiller_email: string | null;
  fulfiller_github_username: string | null;
  fulfiller_metadata: Record<string, unknown>;
}

/** A bounty as the list shows it; `now` is when the response was built. */
export function renderBounty(row: BountyRow, baseUrl: string, now: number): Bounty {
  return {
    pk: row.id,
    url: `${baseUrl}/api/v0.1/bounties/?pk=${row.id}`,
    created_on: formatDateTime(row.created_on),
    modified_on: formatDateTime(row.modified_on),
    title: row.title,
    web3_created: formatDateTime(row.web3_created),
    value_in_token: row.value_in_token,
    token_name: row.token_name,
    token_address: row.token_address,
    bounty_type: row.bounty_type,
    project_length: row.project_length,
    experience_level: row.experience_level,
    github_url: row.github_url,
    github_org_name: row.github_org_name,
    github_repo_name: row.github_repo_name,
    github_issue_number: row.github_issue_number,
    keywords: row.keywords,
    current_bounty: row.current_bounty === 1,
    expires_date: formatDateTime(row.expires_date),
    value_in_eth: decimalAsNumber(row.value_in_eth),
    value_in_usdt: decimalAsNumber(row.value_in_usdt),
    value_in_usdt_now: decimalAsNumber(row.value_in_usdt_now),
    now: formatDateTime(now),
    action_urls: parseStoredJson(row.action_urls),
    paid: parseStoredJson(row.paid),
    is_open: row.is_open === 1,
    status: row.status,
    bounty_owner_address: row.bounty_owner_address,
    bounty_owner_email: row.bounty_owner_email,
    bounty_owner_github_username: row.bounty_owner_github_username,
    metadata: parseStoredJson(row.metadata),
    fulfiller_address: row.fulfiller_address,
    fulfiller_email: row.fulfiller_email,
    fulfiller_github_username: row.fulfiller_github_username,
    fulfiller_metadata: parseStoredJson(row.fulfiller_metadata),
    ...renderVocabulary(row),
  };
}

/** Comma-separated alternatives: trimmed, empty ones dropped, deduplicated and sorted (for the cache key). */
export function alternatives(name: string, raw: string | undefined, transform: (v: string) => string = (v) => v): string[] {
  if (raw === undefined) return [];
  const values = [...new Set(checkText(name, raw).split(',').map((v) => transform(v.trim())).filter((v) => v !== ''))].sort();
  if (values.length > MAX_ALTERNATIVES) {
    throw new AppError('invalid_parameter', `${name} takes at most ${MAX_ALTERNATIVES} comma-separated values.`);
  }
  return values;
}

/** Comma-separated whole numbers (any of); anything else is a 400. */
function integers(name: string, raw: string | undefined): number[] {
  const values = alternatives(name, raw).map((text) => {
    const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
    if (!(value <= MAX_ID)) throw new AppError('invalid_parameter', `${name} takes whole numbers from 0 to ${MAX_ID}, comma-separated.`);
    return value;
  });
  // Deduplicated and in numeric order, so `7,007` and `7` share a cache key.
  return [...new Set(values)].sort((a, b) => a - b);
}

function parseIsOpen(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new AppError('invalid_parameter', 'is_open must be true or false.');
}

function parseOrderBy(raw: string | undefined): { orderBy: BountyOrderColumn; descending: boolean } {
  if (raw === undefined || raw.trim() === '') return { orderBy: 'web3_created', descending: true };
  const text = raw.trim();
  const descending = text.startsWith('-');
  const name = descending ? text.slice(1) : text;
  if (!Object.hasOwn(BOUNTY_ORDER_FIELDS, name)) {
    throw new AppError(
      'invalid_parameter',
      `order_by must be one of ${Object.keys(BOUNTY_ORDER_FIELDS).join(', ')}, optionally with a leading - for descending order.`,
    );
  }
  return { orderBy: BOUNTY_ORDER_FIELDS[name]!, descending };
}

/** Turns the validated query into the repository filter; a bad value is a 400 `invalid_parameter`. */
export function parseBountyQuery(query: BountyListQuery): BountyListFilter {
  checkPaging(query);
  const lower = (v: string) => v.toLowerCase();
  const contains: Partial<Record<BountyTextColumn, string[]>> = {};
  for (const column of ['experience_level', 'project_length', 'bounty_type', 'bounty_owner_address'] as const) {
    const values = alternatives(column, query[column], (v) => v.toLowerCase());
    if (values.length > 0) contains[column] = values;
  }
  const substrings = Object.values(contains).reduce((n, values) => n + values.length, 0);
  if (substrings > MAX_SUBSTRING_ALTERNATIVES) {
    throw new AppError(
      'invalid_parameter',
      `experience_level, project_length, bounty_type and bounty_owner_address take at most ${MAX_SUBSTRING_ALTERNATIVES} comma-separated values together.`,
    );
  }
  const rawData = alternatives('raw_data', query.raw_data, lower);
  if (rawData.length > MAX_RAW_DATA_VALUES || rawData.some((text) => text.length > MAX_RAW_DATA_LENGTH)) {
    throw new AppError('invalid_parameter', `raw_data takes at most ${MAX_RAW_DATA_VALUES} comma-separated values of at most ${MAX_RAW_DATA_LENGTH} characters each.`);
  }
  const githubUrls = alternatives('github_url', query.github_url);
  const interested = [query.started, query.interested_github_username]
    .map((raw, i) => alternatives(i === 0 ? 'started' : 'interested_github_username', raw, lower))
    .filter((names) => names.length > 0);
  const listed = <K extends keyof BountyListFilter>(key: K, values: BountyListFilter[K] & unknown[]) => (values.length > 0 ? { [key]: values } : {});
  return {
    ...(query.pk !== undefined ? { id: query.pk } : {}),
    ...(query.pk__gt !== undefined ? { idAfter: query.pk__gt } : {}),
    contains,
    ...(githubUrls.length > 0 ? { githubUrls } : {}),
    ...listed('ownerUsernames', alternatives('bounty_owner_github_username', query.bounty_owner_github_username, lower)),
    ...listed('statuses', alternatives('idx_status', query.idx_status, lower)),
    ...listed('networks', alternatives('network', query.network)),
    ...listed('standardBountiesIds', integers('standard_bounties_id', query.standard_bounties_id)),
    ...(interested.length > 0 ? { interested } : {}),
    ...listed('fulfillers', alternatives('fulfiller_github_username', query.fulfiller_github_username, lower)),
    ...listed('rawData', rawData),
    ...(query.is_open !== undefined ? { isOpen: parseIsOpen(query.is_open) } : {}),
    ...parseOrderBy(query.order_by),
    limit: query.limit,
    offset: query.offset,
  };
}

/**
 * A bounty list or detail as a document. Every bounty in it carries `now`, the build time: the
 * ETag names the build (see buildEtag); an empty list, the same at every build, is hashed.
 */
function bountyDocument(json: Buffer | string, now: number, total?: number): CachedDocument {
  const bytes = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  return new CachedDocument(bytes, bytes.length === 2 ? etagOf(bytes) : buildEtag(), now, total);
}

/** A request shape as parsed: its cache key, and its list compiled (see `BountiesRepository.prepare`). */
interface ParsedList {
  key: string;
  run: PreparedBountyList;
}

/** Request shapes whose parsed filter and cache key are remembered (a repeated query string skips parsing). */
const PARSED_QUERIES_KEPT = 1000;
const MAX_REMEMBERED_QUERY_LENGTH = 1024;

export function bountyService(bounties: BountiesRepository, cache: PublicCache, clock: () => number = Date.now) {
  const parsed = new Map<string, ParsedList>();

  function parse(query: BountyListQuery, baseUrl: string, requestKey: string | undefined): ParsedList {
    // Long query strings (a github_url list may run to 20 000 characters) are parsed each time, so the memo stays small.
    const memoKey = requestKey === undefined || requestKey.length > MAX_REMEMBERED_QUERY_LENGTH ? undefined : `${baseUrl}|${requestKey}`;
    const known = memoKey === undefined ? undefined : parsed.get(memoKey);
    if (known) return known;
    const filter = parseBountyQuery(query);
    const entry = { key: `${cachePrefix.bounties}${baseUrl}|${JSON.stringify(filter)}`, run: bounties.prepare(filter) };
    if (memoKey !== undefined) {
      if (parsed.size >= PARSED_QUERIES_KEPT) parsed.clear();
      parsed.set(memoKey, entry);
    }
    return entry;
  }

  return {
    /**
     * The bounty list as a cached JSON document. `baseUrl` makes each bounty's
     * `url` absolute, so it is part of the cache key. `requestKey` (the request's
     * path and query string) lets a repeated request skip parsing: the same
     * string always parses to the same filter. A cache hit is returned at once,
     * not as a promise; a bad query throws at once.
     */
    list(query: BountyListQuery, baseUrl: string, requestKey?: string): CachedDocument | Promise<CachedDocument> {
      const { key, run } = parse(query, baseUrl, requestKey);
      return cache.document(key, async () => {
        const now = clock();
        const page = await run(now, baseUrl);
        return bountyDocument(page.json, now, page.total);
      });
    },

    /** One bounty as a cached document, or null when there is none with that id. */
    async get(id: number, baseUrl: string): Promise<CachedDocument | null> {
      checkPaging({ pk: id, limit: 0, offset: 0 });
      const document = await cache.document(`${cachePrefix.bounties}${baseUrl}|pk=${id}`, async () => {
        const [stored] = await bounties.bodies([id]);
        if (!stored) return null;
        const now = clock();
        return bountyDocument(bountyJsonOfStored(stored, baseUrl, now), now);
      });
      return document.bytes.length === 4 && document.body === 'null' ? null : document;
    },
  };
}

export type BountyService = ReturnType<typeof bountyService>;
