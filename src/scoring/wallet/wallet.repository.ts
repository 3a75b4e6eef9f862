import type { Database } from '../../db/connection.js';

/**
 * Queries of the wallet's own writes to the `stamps` table (its sign-in's are in
 * src/sessions/sign-in.repository.ts). Adding a stamp goes through the stamp service (which verifies it);
 * only soft deletes and the wallet's listing are written here. `nullifier_holds` is never
 * touched: a deleted stamp's holds stay until they expire.
 */
export function walletRepository(database: Database) {
  const { db } = database;
  return {
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
