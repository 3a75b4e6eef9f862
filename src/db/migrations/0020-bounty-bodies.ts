import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { BountyRow } from '../../publicdata/bounties/bounties.repository.js';
import { bountyBody } from '../../publicdata/bounties/bounty-json.js';

/** Bounties rendered per statement of the backfill (each row is about 2 KB of JSON). */
const BACKFILL_PAGE = 500;

/**
 * Issue 17: each bounty's JSON as the public API answers it, stored beside the row (minus the
 * request's base URL and time, see bounty-json.ts), so an uncached list reads the ids of its
 * page from an order index and joins their stored texts instead of reading 70 columns and
 * writing 100 KB of JSON per request. A table of its own rather than columns of `bounties`:
 * the texts would double the bounty rows that every index walk and count may visit.
 *
 * The backfill renders with the application's writer (the stored text must be what the API
 * answers today, byte for byte), paging by id. A later change of the bounty JSON (a new field)
 * re-renders every row in a migration of its own, after its columns exist.
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
        const rows = (await db.selectFrom('bounties').selectAll().where('id', '>', after).orderBy('id').limit(BACKFILL_PAGE).execute()) as BountyRow[];
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
