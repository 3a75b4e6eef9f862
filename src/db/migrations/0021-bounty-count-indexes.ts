import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect.js';

/** The substring filters whose columns hold a small vocabulary (a handful of levels, lengths, types). */
const VOCABULARY_FILTER_COLUMNS = ['experience_level', 'project_length', 'bounty_type'] as const;

/**
 * Indexes for the capped count of a list filtered by a vocabulary column. The count
 * turns `experience_level` LIKE '%beginner%' into `experience_level in (the stored values that
 * contain it)` (found by a skip-scan of the column's `(column, id)` index, see the repository),
 * so the matches of one value lie together in `(column, is_open, expires_date)` and the count
 * visits the ~1 000 matches only, instead of testing a LIKE on every open bounty's index entry
 * until it has found them (about three times as many entries for the benchmark's list).
 */
export function bountyCountIndexes(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      for (const column of VOCABULARY_FILTER_COLUMNS) {
        await db.schema.createIndex(`bounties_${column}_open_idx`).on('bounties').columns([column, 'is_open', 'expires_date']).execute();
      }
    },
  };
}
