import { CompiledQuery } from 'kysely';
import { compiledOnce, type Database, type Db } from '../../db/connection.js';
import { isOneOf } from '../../db/dialect.js';
import type { StampsTable } from '../../db/tables/index.js';

export type NewStamp = Omit<StampsTable, 'id' | 'deleted_at' | 'revoked_at' | 'created_at' | 'updated_at'>;

const HOLDS_OF_LIST_SQLITE =
  'select h.nullifier, h.address, h.expires_at from json_each(?) as j cross join nullifier_holds as h on h.scorer_id = ? and h.nullifier = j.value';
const HOLDS_OF_LIST_POSTGRES =
  'select h.nullifier, h.address, h.expires_at from unnest($2::text[]) as j(nullifier) cross join lateral ' +
  '(select nullifier, address, expires_at from nullifier_holds where scorer_id = (select $1::integer) and nullifier = j.nullifier limit 1) as h';

/** Stamps whose scoring fields a repository keeps in memory by default (a few hundred bytes each). */
const SCORING_STAMPS_MAX = 100_000;

/** What scoring reads of a stored stamp, its nullifiers parsed: shared by every scoring of it, so frozen. */
export interface ScoringStamp {
  readonly id: number;
  readonly provider: string;
  readonly issuer: string;
  readonly nullifiers: readonly string[];
  readonly issuanceDate: number;
  readonly expirationDate: number;
}

export function stampsRepository(database: Pick<Database, 'db' | 'dialect'>, options: { scoringStampsMax?: number } = {}) {
  const { db, dialect } = database;
  const scoringStampsMax = options.scoringStampsMax ?? SCORING_STAMPS_MAX;
  // Every scoring (and every v2 score read) runs these, so they are compiled once.
  const liveForScoringQuery = compiledOnce((db: Db, address: string) =>
    db
      .selectFrom('stamps')
      .select(['id', 'provider', 'issuer', 'nullifiers', 'issuance_date', 'expiration_date'])
      .where('address', '=', address)
      .where('deleted_at', 'is', null)
      .where('revoked_at', 'is', null),
  );
  const liveIdsQuery = compiledOnce((db: Db, address: string) =>
    db.selectFrom('stamps').select('id').where('address', '=', address).where('deleted_at', 'is', null).where('revoked_at', 'is', null),
  );
  // A stamp row's scoring fields never change once it is written: a credential digest is stored
  // once per address, a second upsert of it only restores its deletion mark, and ids are never
  // reused (AUTOINCREMENT, identity). So the re-scoring of an address read before reads only the
  // ids of its live stamps (on SQLite from the same covering index) and takes the rest from here:
  // turning 20 rows of six columns into JavaScript values cost three times the ids alone, and the
  // nullifiers' JSON was parsed anew. An address not here is read whole at once, as before, so
  // one past the bound costs no more than it did. Least recently scored addresses leave first.
  // An address without live stamps is not kept: reading it whole costs what its ids would, and
  // keeping it would let any number of distinct addresses fill memory without filling the bound.
  // Each address kept counts one more than its stamps, so entries are bounded too.
  const scoringStamps = new Map<string, Map<number, ScoringStamp>>();
  let rememberedWeight = 0;
  function remember(address: string, stamps: ScoringStamp[]): void {
    forget(address);
    if (stamps.length === 0) return;
    scoringStamps.set(address, new Map(stamps.map((stamp) => [stamp.id, stamp])));
    rememberedWeight += stamps.length + 1;
    while (rememberedWeight > scoringStampsMax && scoringStamps.size > 1) forget(scoringStamps.keys().next().value as string);
  }
  function forget(address: string): void {
    const stamps = scoringStamps.get(address);
    if (stamps === undefined) return;
    scoringStamps.delete(address);
    rememberedWeight -= stamps.size + 1;
  }
  const holdsOfAddress = compiledOnce((db: Db, scorerId: number, address: string) =>
    db.selectFrom('nullifier_holds').select(['nullifier', 'address', 'expires_at']).where('scorer_id', '=', scorerId).where('address', '=', address),
  );
  // SQLite without statistics (no ANALYZE has run) plans `scorer_id = ? and nullifier in (…)` as a
  // range of the covering address index over every hold of the scorer, not as lookups of the
  // primary key: a cost that grows with the table. A CROSS JOIN from the list keeps it outermost,
  // so each nullifier is one lookup of (scorer_id, nullifier) whatever the statistics say.
  const holdsOfListSqlite = (scorerId: number, nullifiers: readonly string[]) =>
    CompiledQuery.raw(HOLDS_OF_LIST_SQLITE, [JSON.stringify(nullifiers), scorerId]) as CompiledQuery<{ nullifier: string; address: string; expires_at: number }>;
  // PostgreSQL plans `scorer_id = $1 and nullifier = any(…)` from the statistics of that scorer:
  // one created since the last ANALYZE (a new scorer's first batch, its first submissions) is
  // estimated at no rows, and the plan walks every hold of the scorer in the covering address
  // index, filtering, at each read: a cost that grows with the scorer's holds. Here each nullifier
  // is one lookup (LATERAL … LIMIT 1, which the planner cannot turn into a hash join), and the
  // scorer, hidden in a sub-select, is planned as an average one: the primary key, whose two
  // columns both bound the lookup, is then always the cheaper index.
  const holdsOfListPostgres = (scorerId: number, nullifiers: readonly string[]) =>
    CompiledQuery.raw(HOLDS_OF_LIST_POSTGRES, [scorerId, [...nullifiers]]) as CompiledQuery<{ nullifier: string; address: string; expires_at: number }>;
  async function holdsByNullifier(scorerId: number, nullifiers: readonly string[]) {
    return (await db.executeQuery(dialect === 'sqlite' ? holdsOfListSqlite(scorerId, nullifiers) : holdsOfListPostgres(scorerId, nullifiers))).rows;
  }
  function scoringStampOf(row: { id: number; provider: string; issuer: string; nullifiers: string; issuance_date: number; expiration_date: number }): ScoringStamp {
    return Object.freeze({
      id: row.id,
      provider: row.provider,
      issuer: row.issuer,
      nullifiers: Object.freeze(JSON.parse(row.nullifiers) as string[]),
      issuanceDate: Number(row.issuance_date),
      expirationDate: Number(row.expiration_date),
    });
  }
  /** The live stamps read whole, and remembered (an address not read before, evicted, or with a stamp not seen yet). */
  async function readScoringStamps(address: string): Promise<ScoringStamp[]> {
    const stamps = (await liveForScoringQuery(db, address)).rows.map(scoringStampOf);
    remember(address, stamps);
    return stamps;
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
    async liveForScoring(address: string): Promise<ScoringStamp[]> {
      const known = scoringStamps.get(address);
      if (known === undefined) return readScoringStamps(address);
      const live: ScoringStamp[] = [];
      for (const { id } of (await liveIdsQuery(db, address)).rows) {
        const stamp = known.get(id);
        if (stamp === undefined) return readScoringStamps(address);
        live.push(stamp);
      }
      // Most recently scored last: the first key is the next to leave (unless a concurrent read replaced it meanwhile).
      if (scoringStamps.get(address) === known) {
        scoringStamps.delete(address);
        scoringStamps.set(address, known);
      }
      return live;
    },

    /**
     * `liveForScoring` of many addresses in one statement (a batch chunk's): an address without live
     * stamps maps to an empty list. Not remembered: a batch's addresses are scored once, and
     * keeping them would push out the addresses that are scored again and again.
     */
    async liveForScoringOf(addresses: readonly string[]): Promise<Map<string, ScoringStamp[]>> {
      const byAddress = new Map<string, ScoringStamp[]>(addresses.map((address) => [address, []]));
      if (addresses.length === 0) return byAddress;
      const rows = await db
        .selectFrom('stamps')
        .select(['address', 'id', 'provider', 'issuer', 'nullifiers', 'issuance_date', 'expiration_date'])
        .where(isOneOf(dialect, 'address', addresses))
        .where('deleted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .execute();
      for (const row of rows) byAddress.get(row.address)?.push(scoringStampOf(row));
      return byAddress;
    },

    /** The holds of these nullifiers for the scorer, whoever holds them, in one statement. */
    async holdsOfNullifiers(scorerId: number, nullifiers: readonly string[]) {
      if (nullifiers.length === 0) return [];
      return holdsByNullifier(scorerId, nullifiers);
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

    /** The address's live stamps (neither deleted nor revoked), newest first: what a wallet holds. */
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
     * Soft-deletes the address's live stamps (a wallet deleting or replacing its own stamps), limited to `providers` when given and sparing
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

export type StampsRepository = ReturnType<typeof stampsRepository>;
