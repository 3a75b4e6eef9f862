import { type Expression, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { containsInsensitive, type DialectName } from '../../db/dialect.js';
import type { GrantsTable } from '../../db/tables/public-data.js';
import type { ProfileRow } from '../profiles.js';
import { COUNT_AHEAD } from '../values.js';

export type GrantRow = GrantsTable;

export interface GrantListFilter {
  id?: number;
  titleKey?: string;
  descriptionHash?: string;
  adminAddress?: string;
  grantType?: string;
  keyword?: string;
  limit: number;
  offset: number;
}

export function grantsRepository(db: Db, dialect: DialectName) {
  /** Active grants matching every given filter. */
  function filtered(filter: GrantListFilter) {
    let query = db.selectFrom('grants').where('active', '=', 1);
    if (filter.id !== undefined) query = query.where('id', '=', filter.id);
    if (filter.titleKey !== undefined) query = query.where('title_key', '=', filter.titleKey);
    if (filter.descriptionHash !== undefined) query = query.where('description_hash', '=', filter.descriptionHash);
    if (filter.adminAddress !== undefined) query = query.where('admin_address', '=', filter.adminAddress);
    if (filter.grantType !== undefined) query = query.where('grant_type', '=', filter.grantType);
    const keyword = filter.keyword;
    if (keyword !== undefined) {
      query = query.where((eb) =>
        eb.or(
          (['title', 'description', 'reference_url'] as const).map(
            (column) => containsInsensitive(dialect, eb.ref(column), keyword) as Expression<SqlBool>,
          ),
        ),
      );
    }
    return query;
  }

  return {
    /** Active grants matching every given filter, by id. */
    async listActive(filter: GrantListFilter): Promise<GrantRow[]> {
      return filtered(filter).selectAll().orderBy('id').limit(filter.limit).offset(filter.offset).execute();
    },

    /**
     * The matches of a filter before limit and offset, counted at most COUNT_AHEAD past the end of
     * the page (the bounty list's rule): `X-Total-Count` and whether a next page exists, at a bounded cost.
     */
    async countActive(filter: GrantListFilter): Promise<number> {
      const cap = filter.offset + filter.limit + COUNT_AHEAD;
      const capped = filtered(filter).select(sql<number>`1`.as('one')).limit(cap).as('matches');
      const row = await db.selectFrom(capped).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** Profiles by id. */
    async profiles(ids: number[]): Promise<ProfileRow[]> {
      if (ids.length === 0) return [];
      return db.selectFrom('profiles').selectAll().where('id', 'in', ids).execute();
    },

    /** Team member profile ids of the given grants, in profile id order. */
    async teamMembers(grantIds: number[]): Promise<{ grant_id: number; profile_id: number }[]> {
      if (grantIds.length === 0) return [];
      return db
        .selectFrom('grant_team_members')
        .select(['grant_id', 'profile_id'])
        .where('grant_id', 'in', grantIds)
        .orderBy('grant_id')
        .orderBy('profile_id')
        .execute();
    },
  };
}

export type GrantsRepository = ReturnType<typeof grantsRepository>;
