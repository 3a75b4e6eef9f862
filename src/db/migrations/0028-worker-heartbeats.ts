import type { Kysely, Migration } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType } from '../dialect.js';

/**
 * When each scoring worker last looked for work: its polling loop writes `seen_at` every third of
 * a lease, so an API process can tell that jobs wait with no worker running (`serve --no-worker`
 * without any `stampgate worker`) and say so in its log and readiness answer. One row per worker
 * process (`owner` is the worker's lease owner); rows of workers gone for a day are deleted when a
 * worker starts.
 */
export function workerHeartbeats(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('scoring_worker_heartbeats')
        .addColumn('owner', orderedTextType(dialect), (c) => c.primaryKey())
        .addColumn('seen_at', timeColumnType, (c) => c.notNull())
        .execute();
    },
  };
}
