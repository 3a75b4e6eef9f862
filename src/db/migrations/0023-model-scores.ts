import type { Kysely, Migration } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType } from '../dialect.js';

/**
 * The Models API's cache: one model service's answer for one address, kept until `expires_at`
 * (MODEL_CACHE_SECONDS after it was fetched). In the database rather than in memory so that every
 * process answers from the same entry and a restart does not send every address to the model
 * services again. `answer` is the model's fields as JSON text (score included). Rows are replaced
 * when a fresh answer is fetched after expiry; nothing else depends on them.
 */
export function modelScores(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('model_scores')
        .addColumn('model', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('address', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('answer', 'text', (c) => c.notNull())
        .addColumn('fetched_at', timeColumnType, (c) => c.notNull())
        .addColumn('expires_at', timeColumnType, (c) => c.notNull())
        .addPrimaryKeyConstraint('model_scores_pk', ['model', 'address'])
        .execute();
    },
  };
}
