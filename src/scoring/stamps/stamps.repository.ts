import { sql } from 'kysely';
import { compiledOnce, type Db } from '../../db/connection.js';
import { dialectOf, jsonTextArrayElements } from '../../db/dialect.js';
import type { StampsTable } from '../../db/tables.js';

export type NewStamp = Omit<StampsTable, 'id' | 'deleted_at' | 'revoked_at' | 'created_at' | 'updated_at'>;

export function stampsRepository(db: Db) {
  // Scoring's one read, compiled once (every submission and v2 score read runs it): the live
  // stamps, each with the scorer's hold (if any) on each of its nullifiers, one row per (stamp,
  // nullifier), so that stamps and holds cost one round trip instead of two in a row.
  const liveWithHoldsQuery = compiledOnce((db: Db, scorerId: number, address: string) =>
    db
      .selectFrom('stamps as s')
      .leftJoin(jsonTextArrayElements(dialectOf(db), 's.nullifiers').as('n'), (join) => join.onTrue())
      .leftJoin('nullifier_holds as h', (join) => join.on('h.scorer_id', '=', scorerId).on('h.nullifier', '=', sql.ref<string>('n.value')))
      .select(['s.id', 's.provider', 's.issuer', 's.nullifiers', 's.issuance_date', 's.expiration_date'])
      .select([sql.ref<string | null>('h.nullifier').as('held_nullifier'), sql.ref<string | null>('h.address').as('held_by'), sql.ref<number | null>('h.expires_at').as('held_until')])
      .where('s.address', '=', address)
      .where('s.deleted_at', 'is', null)
      .where('s.revoked_at', 'is', null),
  );
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

    /**
     * What scoring needs, in one query: the address's live stamps (no credential bodies, each
     * once) and the scorer's holds on their nullifiers.
     */
    async liveForScoringWithHolds(scorerId: number, address: string) {
      const rows = (await liveWithHoldsQuery(db, scorerId, address)).rows;
      const stamps: { id: number; provider: string; issuer: string; nullifiers: string; issuance_date: number; expiration_date: number }[] = [];
      const holds = new Map<string, { nullifier: string; address: string; expires_at: number }>();
      // Rows of one stamp need not come together (the join order is the planner's).
      const seen = new Set<number>();
      for (const row of rows) {
        const id = Number(row.id);
        if (!seen.has(id)) {
          seen.add(id);
          stamps.push({ id, provider: row.provider, issuer: row.issuer, nullifiers: row.nullifiers, issuance_date: row.issuance_date, expiration_date: row.expiration_date });
        }
        if (row.held_nullifier != null && row.held_by != null && row.held_until != null) {
          holds.set(row.held_nullifier, { nullifier: row.held_nullifier, address: row.held_by, expires_at: Number(row.held_until) });
        }
      }
      return { stamps, holds: [...holds.values()] };
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
  };
}

export type StampsRepository = ReturnType<typeof stampsRepository>;
