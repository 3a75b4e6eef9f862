import { type Database, writeTransaction } from '../db/connection.js';
import type { PortalSessionsTable } from '../db/tables/portal.js';

/** Queries of the portal's sign-in: SIWE nonces and session rows (only token hashes). */
export function portalRepository(database: Database) {
  const { db } = database;
  return {
    async insertNonce(nonce: string, now: number, expiresAt: number): Promise<void> {
      await db.insertInto('portal_siwe_nonces').values({ nonce, created_at: now, expires_at: expiresAt, used_at: null }).execute();
    },

    async isNonceUsable(nonce: string, now: number): Promise<boolean> {
      const row = await db
        .selectFrom('portal_siwe_nonces')
        .select('nonce')
        .where('nonce', '=', nonce)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Marks the nonce used and stores the session in one transaction; false (nothing stored) when the nonce was taken meanwhile. */
    async consumeNonceAndCreateSession(nonce: string, session: PortalSessionsTable, now: number): Promise<boolean> {
      return writeTransaction(database, async (trx) => {
        const result = await trx
          .updateTable('portal_siwe_nonces')
          .set({ used_at: now })
          .where('nonce', '=', nonce)
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await trx.insertInto('portal_sessions').values(session).execute();
        return true;
      });
    },

    async findSession(tokenHash: string, now: number) {
      return db
        .selectFrom('portal_sessions')
        .select(['account_id', 'address', 'expires_at'])
        .where('token_hash', '=', tokenHash)
        .where('expires_at', '>', now)
        .executeTakeFirst();
    },

    async deleteSession(tokenHash: string): Promise<boolean> {
      const result = await db.deleteFrom('portal_sessions').where('token_hash', '=', tokenHash).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    async sweepExpired(cutoff: number): Promise<void> {
      await db.deleteFrom('portal_siwe_nonces').where('expires_at', '<', cutoff).execute();
      await db.deleteFrom('portal_sessions').where('expires_at', '<', cutoff).execute();
    },
  };
}

export type PortalRepository = ReturnType<typeof portalRepository>;
