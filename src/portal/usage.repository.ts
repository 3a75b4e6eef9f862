import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import type { KeyUsageDailyTable } from '../db/tables/portal.js';

/** Queries of `key_usage_daily`: additive upserts of counted requests, and reads per key and day. */
export function usageRepository(db: Db) {
  return {
    /** Adds the counts to each (key, day) row, creating it when absent. Each (key, day) at most once in `rows`. */
    async add(rows: readonly KeyUsageDailyTable[]): Promise<void> {
      for (let start = 0; start < rows.length; start += 500) {
        await db
          .insertInto('key_usage_daily')
          .values(rows.slice(start, start + 500))
          .onConflict((oc) =>
            oc.columns(['key_id', 'day']).doUpdateSet({
              requests: sql`key_usage_daily.requests + excluded.requests`,
              rate_limited: sql`key_usage_daily.rate_limited + excluded.rate_limited`,
            }),
          )
          .execute();
      }
    },

    async read(keyIds: readonly number[], fromDay: number, toDay: number): Promise<KeyUsageDailyTable[]> {
      if (keyIds.length === 0) return [];
      const rows = await db
        .selectFrom('key_usage_daily')
        .selectAll()
        .where('key_id', 'in', [...keyIds])
        .where('day', '>=', fromDay)
        .where('day', '<=', toDay)
        .orderBy('key_id')
        .orderBy('day')
        .execute();
      return rows.map((row) => ({ ...row, requests: Number(row.requests), rate_limited: Number(row.rate_limited) }));
    },
  };
}

export type UsageRepository = ReturnType<typeof usageRepository>;
