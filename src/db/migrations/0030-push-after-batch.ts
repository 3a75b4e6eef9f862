import type { Kysely, Migration } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType } from '../dialect.js';

/**
 * Two additions to the operator push:
 *
 * - `onchain_push_jobs.after_batch_id`: a push queued with a batch (`stampgate batches run
 *   --onchain-push`) waits until that batch has ended, so that it attests the scores the batch
 *   recorded instead of scoring the same addresses beside it. Queued with the batch, it survives
 *   the crash of the command that queued it.
 * - `onchain_push_workers`: when each push worker last looked for work and which sender key it
 *   holds (a worker only works jobs of its own key), so that the CLI and `/health/ready` can tell
 *   that a push waits with no worker able to send it.
 */
export function pushAfterBatch(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('onchain_push_jobs').addColumn('after_batch_id', 'text').execute();
      await db.schema
        .createTable('onchain_push_workers')
        .addColumn('owner', orderedTextType(dialect), (c) => c.primaryKey())
        .addColumn('sender', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('seen_at', timeColumnType, (c) => c.notNull())
        .execute();
    },
  };
}
