import type { Db } from '../../db/connection.js';

export function noncesRepository(db: Db) {
  return {
    async insert(nonce: string, accountId: number, now: number, expiresAt: number): Promise<void> {
      await db.insertInto('nonces').values({ nonce, account_id: accountId, created_at: now, expires_at: expiresAt, used_at: null }).execute();
    },
    async findUsable(nonce: string, accountId: number, now: number) {
      return db
        .selectFrom('nonces')
        .selectAll()
        .where('nonce', '=', nonce)
        .where('account_id', '=', accountId)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
    },
    /** Marks the nonce used; false when another request got there first. */
    async markUsed(nonce: string, accountId: number, now: number): Promise<boolean> {
      const result = await db
        .updateTable('nonces')
        .set({ used_at: now })
        .where('nonce', '=', nonce)
        .where('account_id', '=', accountId)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteExpiredBefore(cutoff: number): Promise<void> {
      await db.deleteFrom('nonces').where('expires_at', '<', cutoff).execute();
    },
  };
}

export type NoncesRepository = ReturnType<typeof noncesRepository>;
