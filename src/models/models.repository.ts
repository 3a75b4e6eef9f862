import type { Db } from '../db/connection.js';

export interface CachedModelAnswer {
  model: string;
  address: string;
  /** The JSON text stored by `put`. */
  answer: string;
  expiresAt: number;
}

/** Queries of `model_scores`, the cache of model-service answers; the only writer of that table. */
export function modelsRepository(db: Db) {
  return {
    /** The unexpired answers among `models` for `address` (at `now`). */
    async fresh(models: readonly string[], address: string, now: number): Promise<CachedModelAnswer[]> {
      if (models.length === 0) return [];
      const rows = await db
        .selectFrom('model_scores')
        .select(['model', 'address', 'answer', 'expires_at'])
        .where('address', '=', address)
        .where('model', 'in', [...models])
        .where('expires_at', '>', now)
        .execute();
      return rows.map((row) => ({ model: row.model, address: row.address, answer: row.answer, expiresAt: Number(row.expires_at) }));
    },

    /** Stores (or replaces an expired) answer. */
    async put(entry: { model: string; address: string; answer: string; fetchedAt: number; expiresAt: number }): Promise<void> {
      const row = { model: entry.model, address: entry.address, answer: entry.answer, fetched_at: entry.fetchedAt, expires_at: entry.expiresAt };
      await db
        .insertInto('model_scores')
        .values(row)
        .onConflict((oc) => oc.columns(['model', 'address']).doUpdateSet({ answer: row.answer, fetched_at: row.fetched_at, expires_at: row.expires_at }))
        .execute();
    },
  };
}

export type ModelsRepository = ReturnType<typeof modelsRepository>;
