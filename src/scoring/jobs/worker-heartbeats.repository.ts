import { type Database, writeStatement } from '../../db/connection.js';

/** Rows of workers unseen for this long are deleted when a worker starts (crashed processes leave theirs). */
const forgottenAfterMs = 86_400_000;

/** The only writer of scoring_worker_heartbeats: when each scoring worker last looked for work. */
export function workerHeartbeatsRepository(database: Database) {
  const { db } = database;
  return {
    /** Records that `owner` looked for work at `now`. */
    async beat(owner: string, now: number): Promise<void> {
      await writeStatement(database, (db) =>
        db
          .insertInto('scoring_worker_heartbeats')
          .values({ owner, seen_at: now })
          .onConflict((oc) => oc.column('owner').doUpdateSet({ seen_at: now }))
          .execute(),
      );
    },

    /** Deletes the rows of workers unseen for a day. */
    async forgetLongGone(now: number): Promise<void> {
      await writeStatement(database, (db) => db.deleteFrom('scoring_worker_heartbeats').where('seen_at', '<', now - forgottenAfterMs).execute());
    },

    /** When any worker last looked for work, or null when none ever did (or none for a day). */
    async lastSeen(): Promise<number | null> {
      const row = await db
        .selectFrom('scoring_worker_heartbeats')
        .select((eb) => eb.fn.max('seen_at').as('seen_at'))
        .executeTakeFirst();
      return row?.seen_at == null ? null : Number(row.seen_at);
    },
  };
}

export type WorkerHeartbeatsRepository = ReturnType<typeof workerHeartbeatsRepository>;
