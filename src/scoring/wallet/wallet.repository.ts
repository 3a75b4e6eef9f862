import { type Database, writeTransaction } from '../../db/connection.js';
import type { WalletSessionsTable } from '../../db/tables/wallet.js';

/**
 * Queries of wallet sign-in (SIWE nonces, session tokens) and of the wallet's own writes to
 * the `stamps` table. Adding a stamp goes through the stamp service (which verifies it);
 * only soft deletes and the wallet's listing are written here. `nullifier_holds` is never
 * touched: a deleted stamp's holds stay until they expire.
 */
export function walletRepository(database: Database) {
  const { db } = database;
  return {
    async insertNonce(nonce: string, now: number, expiresAt: number): Promise<void> {
      await db.insertInto('wallet_siwe_nonces').values({ nonce, created_at: now, expires_at: expiresAt, used_at: null }).execute();
    },

    async isNonceUsable(nonce: string, now: number): Promise<boolean> {
      const row = await db
        .selectFrom('wallet_siwe_nonces')
        .select('nonce')
        .where('nonce', '=', nonce)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Marks the nonce used and stores the session in one transaction; false (and nothing
     * stored) when the nonce was used or expired meanwhile.
     */
    async consumeNonceAndCreateSession(nonce: string, session: WalletSessionsTable, now: number): Promise<boolean> {
      return writeTransaction(database, async (trx) => {
        const result = await trx
          .updateTable('wallet_siwe_nonces')
          .set({ used_at: now })
          .where('nonce', '=', nonce)
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await trx.insertInto('wallet_sessions').values(session).execute();
        return true;
      });
    },

    async findSession(tokenHash: string, now: number) {
      return db
        .selectFrom('wallet_sessions')
        .select(['address', 'expires_at'])
        .where('token_hash', '=', tokenHash)
        .where('expires_at', '>', now)
        .executeTakeFirst();
    },

    async deleteSession(tokenHash: string): Promise<boolean> {
      const result = await db.deleteFrom('wallet_sessions').where('token_hash', '=', tokenHash).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    /** Removes nonces and sessions that expired before `cutoff`. */
    async sweepExpired(cutoff: number): Promise<void> {
      await db.deleteFrom('wallet_siwe_nonces').where('expires_at', '<', cutoff).execute();
      await db.deleteFrom('wallet_sessions').where('expires_at', '<', cutoff).execute();
    },

    /** The address's live stamps (neither deleted nor revoked), newest first. */
    async liveStamps(address: string) {
      return db
        .selectFrom('stamps')
        .select(['provider', 'issuer', 'digest', 'credential', 'issuance_date', 'expiration_date', 'created_at'])
        .where('address', '=', address)
        .where('deleted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
    },

    /**
     * Soft-deletes the address's live stamps, limited to `providers` when given and sparing
     * the stamps whose digest is in `keepDigests`. Returns how many were deleted.
     */
    async softDelete(
      address: string,
      filter: { providers?: readonly string[]; keepDigests?: readonly string[] },
      now: number,
    ): Promise<number> {
      if (filter.providers !== undefined && filter.providers.length === 0) return 0;
      let query = db
        .updateTable('stamps')
        .set({ deleted_at: now, updated_at: now })
        .where('address', '=', address)
        .where('deleted_at', 'is', null)
        .where('revoked_at', 'is', null);
      if (filter.providers !== undefined) query = query.where('provider', 'in', [...filter.providers]);
      if (filter.keepDigests !== undefined && filter.keepDigests.length > 0) {
        query = query.where('digest', 'not in', [...filter.keepDigests]);
      }
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type WalletRepository = ReturnType<typeof walletRepository>;
