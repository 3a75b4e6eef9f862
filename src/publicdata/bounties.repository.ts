import { type Expression, type SqlBool, sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { containsInsensitive, notIndexed, type DialectName } from '../db/dialect.js';
import type { BountiesTable } from '../db/tables/public-data.js';

export type BountyRow = BountiesTable;

/** Columns a bounty list can be ordered by; each has a `(column, id)` index (migration 0008). */
export type BountyOrderColumn =
  | 'id'
  | 'created_on'
  | 'modified_on'
  | 'web3_created'
  | 'expires_date'
  | 'title'
  | 'github_url'
  | 'github_org_name'
  | 'github_repo_name'
  | 'token_name'
  | 'bounty_type'
  | 'project_length'
  | 'experience_level'
  | 'status'
  | 'is_open'
  | 'bounty_owner_address'
  | 'bounty_owner_github_username'
  | 'value_in_token_sort'
  | 'value_in_eth_sort'
  | 'value_in_usdt_sort'
  | 'value_in_usdt_now_sort';

/** Columns of the case-insensitive substring filters. */
export type BountyTextColumn = 'experience_level' | 'project_length' | 'bounty_type' | 'bounty_owner_address';

export interface BountyListFilter {
  id?: number;
  /** Per column: any of these substrings (OR), columns combined with AND. */
  contains: Partial<Record<BountyTextColumn, string[]>>;
  githubUrls?: string[];
  isOpen?: boolean;
  orderBy: BountyOrderColumn;
  descending: boolean;
  limit: number;
  offset: number;
}

export function bountiesRepository(db: Db, dialect: DialectName) {
  function listQuery(filter: BountyListFilter) {
    let query = db.selectFrom('bounties');
    if (filter.id !== undefined) query = query.where('id', '=', filter.id);
    for (const [column, values] of Object.entries(filter.contains) as [BountyTextColumn, string[]][]) {
      if (values.length === 0) continue;
      query = query.where((eb) => eb.or(values.map((v) => containsInsensitive(dialect, eb.ref(column), v) as Expression<SqlBool>)));
    }
    if (filter.githubUrls && filter.githubUrls.length > 0) query = query.where('github_url', 'in', filter.githubUrls);
    if (filter.isOpen !== undefined) {
      // The (is_open, web3_created, id) index serves the default order; any other order walks its own index.
      const isOpen = filter.orderBy === 'web3_created' ? sql.ref('is_open') : notIndexed(dialect, 'is_open');
      query = query.where(isOpen, '=', filter.isOpen ? 1 : 0);
    }
    const direction = filter.descending ? 'desc' : 'asc';
    return query
      .selectAll()
      .orderBy(sql.ref(filter.orderBy), direction)
      .orderBy('id', direction)
      .limit(filter.limit)
      .offset(filter.offset);
  }

  return {
    listQuery,

    async list(filter: BountyListFilter): Promise<BountyRow[]> {
      return listQuery(filter).execute();
    },

    async count(): Promise<number> {
      const row = await db.selectFrom('bounties').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export type BountiesRepository = ReturnType<typeof bountiesRepository>;
