import { type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { kyselyReads, type ReadRunner, type ReadSteps, rowsOf } from '../../db/read-steps.js';
import { containsInsensitive, notIndexed, rowCount, type DialectName } from '../../db/dialect.js';
import type { BountiesTable, BountyBodiesTable, PublicDataTables } from '../../db/tables/public-data.js';
import { bountyBody, type BountyBodyRow, bountyListJsonOfBodies, escapedBase, jsonDate } from './bounty-json.js';
import { pageJsonQuery } from './bounty-page-sql.js';
import { COUNT_AHEAD } from '../values.js';

export type BountyRow = BountiesTable;

/**
 * Columns a bounty list can be ordered by, each through an index of its order key and id
 * (migrations 0008, 0010, 0017 and 0024). Left out: the decimals' text (ordered by their keys)
 * and the structured values the interface shows as objects or arrays.
 */
export type BountyOrderColumn = Exclude<
  keyof BountiesTable & string,
  | 'value_in_token'
  | 'value_in_eth'
  | 'value_in_usdt'
  | 'value_in_usdt_now'
  | 'action_urls'
  | 'paid'
  | 'fulfiller_metadata'
  | 'balance'
  | 'token_value_in_usdt'
  | 'value_true'
  | 'interested'
  | 'fulfillments'
>;

/**
 * How a column marks "no value": SQL null, or the empty text of the 0008 decimal order keys and of
 * the two required texts the import fills with '' when the field is absent (`github_issue_number`
 * of a URL without one, `keywords`). Columns not listed always hold a value.
 */
const EMPTY_MEANS_ABSENT = new Set<BountyOrderColumn>(['value_in_eth_sort', 'value_in_usdt_sort', 'value_in_usdt_now_sort', 'github_issue_number', 'keywords']);
const NOT_NULL = new Set<BountyOrderColumn>([
  'id', 'title', 'github_url', 'github_org_name', 'github_repo_name', 'created_on', 'modified_on', 'web3_created', 'expires_date',
  'value_in_token_sort', 'token_name', 'bounty_type', 'project_length', 'experience_level', 'current_bounty', 'status', 'is_open',
  'bounty_owner_address', 'bounty_owner_email', 'bounty_owner_github_username', 'metadata',
]);

/**
 * Long free text: ordered by its first 200 characters, ties by id, through an
 * index of that prefix (migration 0010); a full-text order could not use an
 * index on PostgreSQL, whose btree entries stop at about 2.7 kB.
 */
const PREFIX_ORDERED = new Set<BountyOrderColumn>(['raw_data', 'issue_description', 'metadata', 'privacy_preferences', 'keywords']);

/**
 * Ordered by length first, then by code point (migration 0024's `(length, text, id)` index): the
 * issue number is text, but holds a whole number wherever the import took it from the issue URL,
 * and those then sort as numbers (9 before 10).
 */
const LENGTH_FIRST = new Set<BountyOrderColumn>(['github_issue_number']);

/** Characters of long free text an order compares (migration 0010 indexes this prefix). */
const ORDER_PREFIX_LENGTH = 200;

/** How much of each raw record the `raw_data` filter searches: the order prefix, so its index serves the search. */
export const RAW_DATA_SEARCHED = ORDER_PREFIX_LENGTH;

export { COUNT_AHEAD };

/** Substring filter columns with a small vocabulary, which a count filters through their stored values (migration 0021). */
const VOCABULARY_COLUMNS = new Set<BountyTextColumn>(['experience_level', 'project_length', 'bounty_type']);

/** Columns of the case-insensitive substring filters. */
export type BountyTextColumn = 'experience_level' | 'project_length' | 'bounty_type' | 'bounty_owner_address';

export interface BountyListFilter {
  id?: number;
  /** `pk__gt`: ids strictly greater. */
  idAfter?: number;
  /** Per column: any of these substrings (OR), columns combined with AND. */
  contains: Partial<Record<BountyTextColumn, string[]>>;
  githubUrls?: string[];
  isOpen?: boolean;
  /** Lower-case owner usernames, any of. */
  ownerUsernames?: string[];
  statuses?: string[];
  networks?: string[];
  standardBountiesIds?: number[];
  /** Each list: lower-case usernames, any of which is among the bounty's interested workers (`started`, `interested_github_username`). */
  interested?: string[][];
  /** Lower-case usernames, any of which is among the bounty's fulfillers. */
  fulfillers?: string[];
  /** Case-insensitive substrings of `raw_data`, all of them. */
  rawData?: string[];
  orderBy: BountyOrderColumn;
  descending: boolean;
  limit: number;
  offset: number;
}

export interface BountyPage {
  /** The page as the JSON array the list answers: UTF-8 bytes, or text. */
  json: Buffer | string;
  /** Rows matching the filters, before limit and offset; at most offset + limit + COUNT_AHEAD (see list). */
  total: number;
}

type Eb = ExpressionBuilder<PublicDataTables, 'bounties'>;

/**
 * Stands for the request time among a compiled query's parameters: a list's SQL and parameters
 * are compiled once per filter (building and compiling a Kysely query cost more than running
 * it), and only the time changes between requests. Negative, so no parameter of a filter
 * (ids, limits, texts) can equal it.
 */
const NOW_PARAMETER = -8_640_000_000_000_001;

function at<R>(query: CompiledQuery<R>, now: number): CompiledQuery<R> {
  return { ...query, parameters: query.parameters.map((p) => (p === NOW_PARAMETER ? now : p)) };
}

/** What runs a list of one filter: compiled once, run at any time for any base URL (the bounties' `url`). */
export type PreparedBountyList = (now: number, baseUrl: string) => Promise<BountyPage>;

/**
 * `reads` runs a list's statements (walk, page, count) and a detail's: the `Database.reads` of the
 * database `db` belongs to (on SQLite, one snapshot per list). Not a transaction's `db`: the reads
 * would run outside it.
 */
export function bountiesRepository(db: Db, dialect: DialectName, reads: ReadRunner = kyselyReads(db)) {
  /** The ids a walk (a compiled `listQuery`) finds, in its order. */
  function* idsOf(query: CompiledQuery<{ id: number }>): ReadSteps<number[]> {
    return (yield* rowsOf(query)).map((row) => row.id);
  }

  /** The stored-text lookup of n ids, compiled once per n (only the ids change). */
  const bodyLookups = new Map<number, CompiledQuery<BountyBodiesTable>>();
  function bodyLookup(ids: number[]): CompiledQuery<BountyBodiesTable> {
    let query = bodyLookups.get(ids.length);
    if (!query) {
      query = db.selectFrom('bounty_bodies').select(['bounty_id', 'head', 'tail']).where('bounty_id', 'in', ids).compile();
      bodyLookups.set(ids.length, query);
    }
    return { ...query, parameters: ids };
  }

  /**
   * The stored texts of these bounties, in this order: a primary-key lookup of the page's ids
   * after the walk (rather than a join in the walk, which PostgreSQL's planner would weigh
   * against other plans for every filter). A bounty stored without its text (written other than
   * by the import, e.g. by hand) is rendered from its row: the same answer, only slower.
   */
  function* bodiesOf(ids: number[]): ReadSteps<BountyBodyRow[]> {
    if (ids.length === 0) return [];
    const found = new Map<number, BountyBodyRow>();
    for (const row of yield* rowsOf(bodyLookup(ids))) found.set(row.bounty_id, { id: row.bounty_id, head: row.head, tail: row.tail });
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      for (const row of yield* rowsOf(db.selectFrom('bounties').selectAll().where('id', 'in', missing).compile())) found.set(row.id, { id: row.id, ...bountyBody(row) });
    }
    // A bounty deleted between the walk and the lookup (PostgreSQL: each statement its own snapshot) is left out, as if the walk had come after.
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  const pageJson = pageJsonQuery(dialect);

  /** The page's JSON array: joined by SQLite from the stored texts (see bounty-page-sql.ts), here on PostgreSQL or when a text is missing. */
  function* pageJsonOf(ids: number[], baseUrl: string, now: number): ReadSteps<{ json: Buffer | string; count: number }> {
    if (ids.length === 0) return { json: '[]', count: 0 };
    const row = pageJson && (yield* rowsOf(pageJson(escapedBase(baseUrl), jsonDate(now), ids)))[0];
    if (row && row.ids === ids.join(',')) return { json: row.body, count: ids.length };
    const rows = yield* bodiesOf(ids);
    return { json: bountyListJsonOfBodies(rows, baseUrl, now), count: rows.length };
  }

  function filtered(filter: BountyListFilter, now: number, walk = true) {
    let query = db.selectFrom('bounties');
    if (filter.id !== undefined) query = query.where('id', '=', filter.id);
    if (filter.idAfter !== undefined) query = query.where('id', '>', filter.idAfter);
    for (const [column, values] of Object.entries(filter.contains) as [BountyTextColumn, string[]][]) {
      if (values.length === 0) continue;
      if (!walk && VOCABULARY_COLUMNS.has(column)) query = query.where(column, 'in', storedValuesContaining(column, values));
      else query = query.where((eb) => eb.or(values.map((v) => containsInsensitive(dialect, eb.ref(column), v) as Expression<SqlBool>)));
    }
    if (filter.githubUrls?.length) query = query.where('github_url', 'in', filter.githubUrls);
    if (filter.ownerUsernames?.length) query = query.where(sql`lower(bounty_owner_github_username)`, 'in', filter.ownerUsernames);
    if (filter.statuses?.length) query = query.where('status', 'in', filter.statuses as BountyRow['status'][]);
    if (filter.networks?.length) query = query.where('network', 'in', filter.networks);
    if (filter.standardBountiesIds?.length) query = query.where('standard_bounties_id', 'in', filter.standardBountiesIds);
    for (const names of filter.interested ?? []) query = query.where(people('interested', names));
    if (filter.fulfillers?.length) query = query.where(people('fulfiller', filter.fulfillers));
    // A list walks its order index and tests each id against the matches; a count looks the matches up by id.
    if (filter.rawData?.length) query = query.where(walk ? notIndexed(dialect, 'id') : sql.ref('id'), 'in', rawDataMatches(filter.rawData));
    if (filter.isOpen !== undefined) {
      // The (is_open, web3_created, id) index serves the default order; any other order walks its own index.
      // A count has no order to walk and may use its is_open index.
      const isOpen = filter.orderBy === 'web3_created' || !walk ? sql.ref('is_open') : notIndexed(dialect, 'is_open');
      // Open = not completed and not past its expiry date; closed is the complement.
      // The expiry is checked on the rows the walk visits: most open bounties are not expired, so its index would not narrow much.
      // A count may range over it after equalities on the vocabulary columns (migration 0021).
      const expires = walk ? notIndexed(dialect, 'expires_date') : sql.ref('expires_date');
      query = filter.isOpen
        ? query.where(isOpen, '=', 1).where(expires, '>', now)
        : query.where((eb) => eb.or([eb(isOpen, '=', 0), eb(expires, '<=', now)]));
    }
    return query;
  }

  /**
   * The distinct stored values of a vocabulary column that contain any of these texts: the same
   * rows as the LIKE on the column, but as an equality a count can look up in the column's
   * `(column, is_open, expires_date)` index (migration 0021), visiting the matches only. The
   * values are found by a skip-scan of the `(column, id)` index, one seek per distinct value
   * (a few), and are read by the statement itself, so they are never stale.
   */
  function storedValuesContaining(column: BountyTextColumn, texts: string[]) {
    const ref = sql.ref(`bounties.${column}`);
    const matches = texts.map((text) => containsInsensitive(dialect, sql.ref('v.x'), text));
    return sql<string>`(with recursive v(x) as (select min(${ref}) from bounties union all select (select min(${ref}) from bounties where ${ref} > v.x) from v where v.x is not null) select v.x from v where ${sql.join(matches, sql` or `)})`;
  }

  /**
   * Ids whose raw record contains every text in its first RAW_DATA_SEARCHED characters: a scan of the
   * `substr(raw_data, 1, 200)` index (migration 0010), never of the table, whose multi-kilobyte
   * raw records cost an overflow-page read per row on SQLite.
   */
  function rawDataMatches(texts: string[]) {
    let query = db.selectFrom('bounties').select('id');
    for (const text of texts) query = query.where(() => containsInsensitive(dialect, orderKey('raw_data'), text));
    return query;
  }

  function people(role: 'interested' | 'fulfiller', names: string[]) {
    return (eb: Eb) =>
      eb('id', 'in', db.selectFrom('bounty_people').select('bounty_id').where('role', '=', role).where('username_key', 'in', names));
  }

  /** The order key of a column: long free text sorts by its prefix, written as in the migration's indexes (a bound parameter would not match them). */
  function orderKey(column: BountyOrderColumn) {
    return PREFIX_ORDERED.has(column) ? sql`substr(${sql.ref(column)}, 1, ${sql.lit(ORDER_PREFIX_LENGTH)})` : sql.ref(column);
  }

  /** The expressions a list sorts by, before the id that breaks ties: an index's leading columns. */
  function orderKeys(column: BountyOrderColumn) {
    return LENGTH_FIRST.has(column) ? [sql`length(${sql.ref(column)})`, sql.ref(column)] : [orderKey(column)];
  }

  /** Rows with / without a value in the order column (null, or an empty order key), as a range of its index. */
  function hasValue(column: BountyOrderColumn, present: boolean) {
    // The leading column of the (length, text, id) index, so both walks are ranges of it.
    if (LENGTH_FIRST.has(column)) return (eb: Eb) => eb(sql`length(${sql.ref(column)})`, present ? '>' : '=', 0);
    if (EMPTY_MEANS_ABSENT.has(column)) return (eb: Eb) => eb(orderKey(column), present ? '>' : '=', '');
    return (eb: Eb) => eb(orderKey(column), present ? 'is not' : 'is', null);
  }

  /**
   * The ids of the filtered rows that have a value, in the chosen order: the index walk that
   * serves most of a list. The common filter columns are in the most used order indexes (migration
   * 0017), so such a walk reads no table row (an index-only scan); the texts are looked up by id after it.
   */
  function listQuery(filter: BountyListFilter, now = Date.now()) {
    let query = filtered(filter, now);
    if (!NOT_NULL.has(filter.orderBy)) query = query.where(hasValue(filter.orderBy, true));
    const direction = filter.descending ? 'desc' : 'asc';
    let ordered = query.select('id');
    for (const key of orderKeys(filter.orderBy)) ordered = ordered.orderBy(key, direction);
    return ordered.orderBy('id', direction).limit(rowCount(dialect, filter.limit)).offset(rowCount(dialect, filter.offset));
  }

  /** The capped count of `X-Total-Count` (see COUNT_AHEAD): from the filter columns of an index, never the table. */
  function cappedCount(filter: BountyListFilter, now: number) {
    const cap = filter.offset + filter.limit + COUNT_AHEAD;
    const capped = filtered(filter, now, false).select(sql<number>`1`.as('one')).limit(rowCount(dialect, cap)).as('matches');
    return db.selectFrom(capped).select((eb) => eb.fn.countAll<number | string>().as('n'));
  }

  function* count(query: ReturnType<typeof filtered>): ReadSteps<number> {
    const [row] = yield* rowsOf(query.select((eb) => eb.fn.countAll<number | string>().as('n')).compile());
    return Number(row?.n ?? 0);
  }

  /** The rows after those with a value in the order column, when the walk of its index ran out (`found` rows) before the page was full. */
  function* absent(filter: BountyListFilter, now: number, found: number): ReadSteps<number[]> {
    const column = filter.orderBy;
    // The walk ran out of rows with a value: there are offset + rows of them, unless it started past their end.
    const present = found > 0 || filter.offset === 0 ? filter.offset + found : yield* count(filtered(filter, now).where(hasValue(column, true)));
    const direction = filter.descending ? 'desc' : 'asc';
    const query = filtered(filter, now)
      .where(hasValue(column, false))
      .select('id')
      .orderBy('id', direction)
      .limit(rowCount(dialect, filter.limit - found))
      .offset(rowCount(dialect, Math.max(0, filter.offset - present)));
    return yield* idsOf(query.compile());
  }

  /** One page of a prepared list (see prepare), as the statements that read it. */
  function* pageOf(filter: BountyListFilter, page: CompiledQuery<{ id: number }>, total: CompiledQuery<{ n: number | string }>, now: number, baseUrl: string): ReadSteps<BountyPage> {
    const ids = yield* idsOf(at(page, now));
    if (!NOT_NULL.has(filter.orderBy) && ids.length < filter.limit) ids.push(...(yield* absent(filter, now, ids.length)));
    const { json, count } = yield* pageJsonOf(ids, baseUrl, now);
    if (count < filter.limit && (count > 0 || filter.offset === 0)) return { json, total: filter.offset + count };
    const [row] = yield* rowsOf(at(total, now));
    return { json, total: Number(row?.n ?? 0) };
  }

  return {
    listQuery,
    countQuery: (filter: BountyListFilter, now = Date.now()) => cappedCount(filter, now),

    /**
     * One page and the total. Rows without a value in the order column come
     * after all rows with one, in either direction (by id in that direction):
     * a walk of the column's index for the rows with a value, then, when the
     * page is not full, a walk by id of the rows without one. A page that is not
     * full gives the total; a full one counts, up to COUNT_AHEAD past its end.
     */
    prepare(filter: BountyListFilter): PreparedBountyList {
      const page = listQuery(filter, NOW_PARAMETER).compile();
      const total = cappedCount(filter, NOW_PARAMETER).compile();
      return (now, baseUrl) => reads(pageOf(filter, page, total, now, baseUrl));
    },

    async list(filter: BountyListFilter, baseUrl: string, now = Date.now()): Promise<BountyPage> {
      return this.prepare(filter)(now, baseUrl);
    },

    /** The stored texts of these bounties, in this order (a detail is a page of one). */
    bodies: (ids: number[]) => reads(bodiesOf(ids)),

    async get(id: number): Promise<BountyRow | undefined> {
      return db.selectFrom('bounties').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async count(): Promise<number> {
      const row = await db.selectFrom('bounties').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export type BountiesRepository = ReturnType<typeof bountiesRepository>;
