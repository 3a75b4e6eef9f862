import { type Database, writeStatement } from '../db/connection.js';

/** Rows of workers unseen for this long are deleted when a worker starts (crashed processes leave theirs). */
const forgottenAfterMs = 86_400_000;

/**
 * The only writer of `onchain_push_workers`: when each push worker last looked for work, with the
 * sender key it holds (a worker only works the jobs of its own key, so presence counts per key).
 */
export function pushWorkersRepository(database: Database) {
  const { db } = database;
  return {
    async beat(owner: string, sender: string, now: number): Promise<void> {
      const key = sender.toLowerCase();
      await writeStatement(database, (w) =>
        w
          .insertInto('onchain_push_workers')
          .values({ owner, sender: key, seen_at: now })
          .onConflict((oc) => oc.column('owner').doUpdateSet({ sender: key, seen_at: now }))
          .execute(),
      );
    },

    async forgetLongGone(now: number): Promise<void> {
      await writeStatement(database, (w) => w.deleteFrom('onchain_push_workers').where('seen_at', '<', now - forgottenAfterMs).execute());
    },

    /** When a push worker holding `sender`'s key last looked for work, or null when none did (for a day). */
    async lastSeen(sender: string): Promise<number | null> {
      const row = await db
        .selectFrom('onchain_push_workers')
        .select((eb) => eb.fn.max('seen_at').as('seen_at'))
        .where('sender', '=', sender.toLowerCase())
        .executeTakeFirst();
      return row?.seen_at == null ? null : Number(row.seen_at);
    },
  };
}

export type PushWorkersRepository = ReturnType<typeof pushWorkersRepository>;
