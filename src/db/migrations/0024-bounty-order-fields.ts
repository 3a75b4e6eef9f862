import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/** Short text fields of the interface's Bounty table orderable since this migration, each by `(column, id)`. */
const PLAIN_ORDER_COLUMNS = ['fulfiller_address', 'fulfiller_email', 'fulfiller_github_username'] as const;

/**
 * The last scalar fields of the interface's Bounty table become orderable, each through an index
 * that serves the order in either direction and stops at `limit`:
 *
 * - the fulfiller's address, e-mail and username: `(column, id)`; null (unfulfilled) rows are read
 *   by the second walk of the list (by id), so nulls come last in both directions;
 * - `github_issue_number`: `(length, text, id)`, so whole numbers sort as numbers (9 before 10);
 * - `keywords` (comma-joined, unbounded): its first 200 characters and id, like the long free text
 *   of migration 0010, since PostgreSQL refuses btree entries past about 2.7 kB.
 *
 * On PostgreSQL the columns are pinned to the "C" collation first, so that they compare by code
 * point like every other ordered text column (and as SQLite's BINARY collation does).
 */
export function bountyOrderFields(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect === 'postgres') {
        for (const name of [...PLAIN_ORDER_COLUMNS, 'github_issue_number', 'keywords']) {
          await sql`alter table bounties alter column ${sql.ref(name)} type text collate "C"`.execute(db);
        }
      }
      for (const column of PLAIN_ORDER_COLUMNS) {
        await db.schema.createIndex(`bounties_${column}_idx`).on('bounties').columns([column, 'id']).execute();
      }
      const issue = sql.ref('github_issue_number');
      await sql`create index bounties_github_issue_number_idx on bounties ((length(${issue})), ${issue}, id)`.execute(db);
      await sql`create index bounties_keywords_prefix_idx on bounties ((substr(${sql.ref('keywords')}, 1, 200)), id)`.execute(db);
    },
  };
}
