import { type Kysely, type Migration, sql } from 'kysely';
import { type DialectName, timeColumnType } from '../dialect.js';

/**
 * The full score record: `expiration_date` (earliest expiry among the counted stamps, epoch ms)
 * and `stamp_scores` (JSON object provider → 5-dp weight) beside each score row.
 *
 * Rows scored before this migration cannot be re-derived here (which stamps counted is only known
 * by scoring again, and re-scoring silently could change a score nobody asked to change). They get
 * the values that keep every client working: a settled row (DONE or ERROR) gets `stamp_scores` `{}`
 * and `expiration_date` null; a PROCESSING row keeps both null and gets the real values when its
 * job completes. The next submission of an address fills in its true values.
 */
export function scoreRecord(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('scores').addColumn('expiration_date', timeColumnType).execute();
      await db.schema.alterTable('scores').addColumn('stamp_scores', 'text').execute();
      await db
        .updateTable('scores')
        .set({ stamp_scores: '{}' })
        .where(sql.ref('status'), 'in', ['DONE', 'ERROR'])
        .execute();
    },
  };
}
