import { compiledOnce, type Db } from '../../db/connection.js';
import type { StampsTable } from '../../db/tables.js';

export type NewStamp = Omit<StampsTable, 'id' | 'deleted_at' | 'revoked_at' | 'created_at' | 'updated_at'>;

/** Longest nullifier list whose holds query is compiled once (one compiled query per length). */
const COMPILED_HOLDS_MAX = 64;

export function stampsRepository(db: Db) {
  // Every scoring (and every v2 score read) runs these, so they are compiled once.
  const liveForScoringQuery = compiledOnce((db: Db, address: string) =>
    db
      .selectFrom('stamps')
      .select(['id', 'provider', 'issuer', 'nullifiers', 'issuance_date', 'expiration_date'])
      .where('address', '=', address)
      .where('deleted_at', 'is', null)
      .where('revoked_at', 'is', null),
  );
  const holdsQueries = new Map<number, ReturnType<typeof holdsQuery>>();
  function holdsQuery(count: number) {
    return compiledOnce((db: Db, scorerId: number, ...nullifiers: string[]) =>
      db
        .selectFrom('nullifier_holds')
        .select(['nullifier', 'address', 'expires_at'])
        .where('scorer_id', '=', scorerId)
        .where('nullifier', 'in', nullifiers.slice(0, count)),
    );
  }
  const holdsOfAddress = compiledOnce((db: Db, scorerId: number, address: string) =>
    db.selectFrom('nullifier_holds').select(['nullifier', 'address', 'expires_at']).where('scorer_id', '=', scorerId).where('address', '=', address),
  );
  async function holdsByNullifier(scorerId: number, nullifiers: string[]) {
    if (nullifiers.length <= COMPILED_HOLDS_MAX) {
      let query = holdsQueries.get(nullifiers.length);
      if (!query) holdsQueries.set(nullifiers.length, (query = holdsQuery(nullifiers.length)));
      return (await query(db, scorerId, ...nullifiers)).rows;
    }
    return db.selectFrom('nullifier_holds').select(['nullifier', 'address', 'expires_at']).where('scorer_id', '=', scorerId).where('nullifier', 'in', nullifiers).execute();
  }
  return {
    /**
     * Stores a stamp; the same credential for the same address is stored once.
     * Re-adding a deleted one restores it; a revoked one stays revoked.
     */
    async upsert(stamp: NewStamp, now: number): Promise<'stored' | 'unchanged' | 'revoked'> {
      const existing = await db
        .selectFrom('stamps')
        .select(['id', 'deleted_at', 'revoked_at'])
        .where('address', '=', stamp.address)
        .where('digest', '=', stamp.digest)
        .executeTakeFirst();
      if (existing?.revoked_at != null) return 'revoked';
      if (existing && existing.deleted_at === null) return 'unchanged';
      await db
        .insertInto('stamps')
        .values({ ...stamp, created_at: now, updated_at: now, deleted_at: null, revoked_at: null })
        .onConflict((oc) =>
          oc.columns(['address', 'digest']).doUpdateSet({ deleted_at: null, created_at: now, updated_at: now }),
        )
        .execute();
      return 'stored';
    },

    /** What scoring needs of an address's live stamps: no credential bodies. */
    async liveForScoring(address: string) {
      return (await liveForScoringQuery(db, address)).rows;
    },

    async revoke(filter: { digest?: string; address?: string; provider?: string }, now: number): Promise<number> {
      let query = db.updateTable('stamps').set({ revoked_at: now, updated_at: now }).where('revoked_at', 'is', null);
      if (filter.digest) query = query.where('digest', '=', filter.digest);
      if (filter.address) query = query.where('address', '=', filter.address);
      if (filter.provider) query = query.where('provider', '=', filter.provider);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** One page of an address's live stamps, newest first; `limit + 1` rows tell whether a next page exists. */
    async livePage(address: string, limit: number, offset: number) {
      return db
        .selectFrom('stamps')
        .select(['id', 'provider', 'credential'])
        .where('address', '=', address)
        .where('deleted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute();
    },

    async listByAddress(address: string) {
      return db
        .selectFrom('stamps')
        .select(['id', 'provider', 'issuer', 'digest', 'issuance_date', 'expiration_date', 'created_at', 'deleted_at', 'revoked_at'])
        .where('address', '=', address)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
    },

    /**
     * The holds of these nullifiers. Read first as the holds of `address` (one index range: a
     * re-scored address holds its nullifiers already), then, for the nullifiers it does not hold,
     * by nullifier.
     */
    async holdsFor(scorerId: number, address: string, nullifiers: string[]) {
      if (nullifiers.length === 0) return [];
      const wanted = new Set(nullifiers);
      const own = (await holdsOfAddress(db, scorerId, address)).rows.filter((hold) => wanted.has(hold.nullifier));
      if (own.length === wanted.size) return own;
      for (const hold of own) wanted.delete(hold.nullifier);
      return [...own, ...(await holdsByNullifier(scorerId, [...wanted]))];
    },
  };
}

export type StampsRepository = ReturnType<typeof stampsRepository>;
